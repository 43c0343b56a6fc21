// ctest-labels: litert
// TopK (largest/smallest, any axis, NHWC-stored input) and CumSum (axes,
// exclusive, reverse), proven against onnxruntime.
#include <gtest/gtest.h>

#include "onnx/op_test_util.h"

namespace gpuclean {
namespace {

using testing::ConvertModel;
using testing::CountOp;
using testing::OnnxTestModel;
using testing::RandomValues;

TEST(TopK, AxesLargestSmallest) {
  OnnxTestModel m;
  m.Input("x", {2, 5, 7});
  m.InitI64("k3", {1}, {3});
  m.Node("TopK", {"x", "k3"}, {"v_last", "i_last"});
  m.Node("TopK", {"x", "k3"}, {"v_mid", "i_mid"}).Int("axis", 1);
  m.Node("TopK", {"x", "k3"}, {"v_small", "i_small"}).Int("axis", 0 - 1).Int("largest", 0);
  m.Input("img", {1, 3, 4, 4});
  m.InitF32("w", {6, 3, 1, 1}, RandomValues(18, 4));
  m.Node("Conv", {"img", "w"}, {"c"});  // stored NHWC: channels innermost
  m.Node("TopK", {"c", "k3"}, {"v_ch", "i_ch"}).Int("axis", 1);
  for (const char* o : {"v_last", "v_mid", "v_small", "v_ch"}) m.Output(o);
  for (const char* o : {"i_last", "i_mid", "i_small", "i_ch"}) m.Output(o, testing::kOnnxInt64);
  const auto r = ConvertModel(m);
  ASSERT_TRUE(r.proven) << r.RenderText();
  EXPECT_EQ(CountOp(r, "TOPK_V2"), 4);
}

TEST(CumSum, AxesExclusiveReverse) {
  OnnxTestModel m;
  m.Input("x", {2, 3, 5});
  int n = 0;
  for (int64_t axis : {0, 1, -1}) {
    for (int ex : {0, 1}) {
      for (int rev : {0, 1}) {
        const std::string a = "a" + std::to_string(n), y = "y" + std::to_string(n++);
        m.InitI64(a, {}, {axis});
        m.Node("CumSum", {"x", a}, {y}).Int("exclusive", ex).Int("reverse", rev);
        m.Output(y);
      }
    }
  }
  const auto r = ConvertModel(m);
  ASSERT_TRUE(r.proven) << r.RenderText();
  EXPECT_EQ(CountOp(r, "CUMSUM"), 12);
}

}  // namespace
}  // namespace gpuclean
