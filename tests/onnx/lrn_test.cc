// ctest-labels: litert
// LRN (sizes 3 and 5; onnxruntime refuses even sizes) and MeanVarianceNormalization (default and other
// axes, NHWC-stored input), proven against onnxruntime.
#include <gtest/gtest.h>

#include "onnx/op_test_util.h"

namespace gpuclean {
namespace {

using testing::ConvertModel;
using testing::CountOp;
using testing::OnnxTestModel;
using testing::RandomValues;

TEST(Lrn, SizesAndMvn) {
  OnnxTestModel m;
  m.Input("x", {1, 7, 4, 5});
  m.Node("LRN", {"x"}, {"lrn3"}).Int("size", 3);
  m.Node("LRN", {"x"}, {"lrn4"}).Int("size", 5).Float("alpha", 0.01f).Float("beta", 0.5f).Float("bias", 2.0f);
  m.Node("MeanVarianceNormalization", {"x"}, {"mvn"});
  m.InitF32("w", {4, 7, 1, 1}, RandomValues(28, 2));
  m.Node("Conv", {"x", "w"}, {"c"});
  m.Node("MeanVarianceNormalization", {"c"}, {"mvn_hw"}).Ints("axes", {2, 3});
  for (const char* o : {"lrn3", "lrn4", "mvn", "mvn_hw"}) m.Output(o);
  const auto r = ConvertModel(m);
  ASSERT_TRUE(r.proven) << r.RenderText();
  EXPECT_EQ(CountOp(r, "CONV_2D"), 3) << r.RenderText();  // two band sums and the conv
}

}  // namespace
}  // namespace gpuclean
