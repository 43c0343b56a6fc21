// ctest-labels: litert
// Gather with constant indices becomes SLICEs (one per run of consecutive
// indices) joined by CONCATENATION, which GPU delegates take and GATHER they
// do not: on a plain tensor, on a conv feature map held NHWC (the axis
// remapped), with a 2-D index tensor, and negative or repeated indices;
// proven against onnxruntime. Runtime indices keep GATHER.
#include <gtest/gtest.h>

#include "onnx/op_test_util.h"

namespace gpuclean {
namespace {

using testing::ConvertModel;
using testing::CountOp;
using testing::OnnxTestModel;
using testing::RandomValues;

TEST(Gather, ConstantIndicesBecomeSlices) {
  OnnxTestModel m;
  m.Input("x", {2, 10, 6});
  m.InitI64("picks", {4}, {0, 3, 4, -1});
  m.Node("Gather", {"x", "picks"}, {"rows"}).Int("axis", 1);
  m.InitI64("grid", {2, 2}, {5, 5, 0, 1});
  m.Node("Gather", {"x", "grid"}, {"grid_rows"}).Int("axis", 2);
  // Channels of a conv output (stored NHWC): the axis maps to the last one.
  m.Input("image", {1, 3, 8, 8});
  m.InitF32("w", {8, 3, 3, 3}, RandomValues(8 * 27, 41, 0.3f));
  m.Node("Conv", {"image", "w"}, {"features"}).Ints("pads", {1, 1, 1, 1});
  m.InitI64("channels", {3}, {6, 1, 2});
  m.Node("Gather", {"features", "channels"}, {"some_channels"}).Int("axis", 1);
  m.Node("Relu", {"some_channels"}, {"activated"});
  m.Output("rows");
  m.Output("grid_rows");
  m.Output("activated");
  const convert::Report r = ConvertModel(m);
  ASSERT_TRUE(r.proven) << r.RenderText();
  EXPECT_EQ(CountOp(r, "GATHER"), 0) << r.RenderText();
  EXPECT_GE(CountOp(r, "SLICE"), 7) << r.RenderText();
  EXPECT_GE(CountOp(r, "CONCATENATION"), 3) << r.RenderText();
}

TEST(Gather, RuntimeIndicesKeepGather) {
  OnnxTestModel m;
  m.InitF32("table", {16, 4}, RandomValues(64, 42, 1.0f));
  m.Input("ids", {1, 5}, testing::kOnnxInt32);
  m.Node("Gather", {"table", "ids"}, {"emb"}).Int("axis", 0);
  m.Output("emb");
  const convert::Report r = ConvertModel(m);
  ASSERT_TRUE(r.proven) << r.RenderText();
  EXPECT_EQ(CountOp(r, "GATHER"), 1) << r.RenderText();
}

}  // namespace
}  // namespace gpuclean
