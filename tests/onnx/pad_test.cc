// ctest-labels: litert
// Pad: constant (zero, a value, a run-time value, integers), reflect, edge
// (small and large pads), negative pads (crops), axes, and an NHWC-stored
// input; proven against onnxruntime.
#include <gtest/gtest.h>

#include "onnx/op_test_util.h"

namespace gpuclean {
namespace {

using testing::ConvertModel;
using testing::CountOp;
using testing::OnnxTestModel;
using testing::RandomValues;

TEST(Pad, EveryModeAndPadShape) {
  OnnxTestModel m;
  m.Input("x", {2, 3, 5, 6});
  m.InitI64("p_zero", {8}, {0, 0, 1, 2, 0, 1, 2, 1});
  m.Node("Pad", {"x", "p_zero"}, {"zero"});
  m.InitF32("v", {}, {1.5f});
  m.Node("Pad", {"x", "p_zero", "v"}, {"value"});
  m.InitI64("p_neg", {8}, {0, 0, -1, 2, 1, 0, 1, -2});
  m.Node("Pad", {"x", "p_neg", "v"}, {"neg"});
  m.Node("Pad", {"x", "p_neg"}, {"neg_reflect"}).Str("mode", "reflect");
  m.InitI64("p_ref", {8}, {0, 1, 2, 3, 0, 2, 4, 5});
  m.Node("Pad", {"x", "p_ref"}, {"reflect"}).Str("mode", "reflect");
  m.Node("Pad", {"x", "p_ref"}, {"edge"}).Str("mode", "edge");
  m.InitI64("p_one", {8}, {0, 0, 1, 0, 0, 0, 1, 1});
  m.Node("Pad", {"x", "p_one"}, {"edge_small"}).Str("mode", "edge");
  m.Node("Pad", {"x", "p_neg"}, {"edge_neg"}).Str("mode", "edge");
  m.InitI64("p_crop", {8}, {0, -1, -1, 0, 0, 0, -2, -3});
  m.Node("Pad", {"x", "p_crop"}, {"crop_only"});
  for (const char* o :
       {"zero", "value", "neg", "neg_reflect", "reflect", "edge", "edge_small", "edge_neg", "crop_only"})
    m.Output(o);
  const auto r = ConvertModel(m);
  ASSERT_TRUE(r.proven) << r.RenderText();
  EXPECT_GE(CountOp(r, "MIRROR_PAD"), 2) << r.RenderText();
}

TEST(Pad, RunTimeValueIntegersAndNhwcInput) {
  OnnxTestModel m;
  m.Input("x", {1, 3, 4, 5});
  m.Input("v", {});
  m.InitI64("p", {8}, {0, 0, 1, 2, 0, 0, 3, 1});
  m.Node("Pad", {"x", "p", "v"}, {"runtime"});
  m.InitF32("w", {4, 3, 1, 1}, RandomValues(12, 5));
  m.Node("Conv", {"x", "w"}, {"c"});  // stored NHWC
  m.InitI64("pc", {8}, {0, 1, 2, 0, 0, 2, 1, 3});
  m.Node("Pad", {"c", "pc"}, {"nhwc_reflect"}).Str("mode", "reflect");
  m.Node("Pad", {"c", "pc"}, {"nhwc_edge"}).Str("mode", "edge");
  m.Node("Pad", {"c", "pc", "v"}, {"nhwc_const"});
  m.Input("i", {2, 3}, testing::kOnnxInt64);
  m.InitI64("pi", {4}, {1, 0, 0, 2});
  m.InitI64("iv", {}, {-7});
  m.Node("Pad", {"i", "pi", "iv"}, {"ints"});
  for (const char* o : {"runtime", "nhwc_reflect", "nhwc_edge", "nhwc_const"}) m.Output(o);
  m.Output("ints", testing::kOnnxInt64);
  const auto r = ConvertModel(m);
  ASSERT_TRUE(r.proven) << r.RenderText();
}

TEST(Pad, Opset2Attributes) {
  OnnxTestModel m(7);
  m.Input("x", {1, 2, 3, 4});
  m.Node("Pad", {"x"}, {"y"}).Ints("pads", {0, 0, 1, 2, 0, 0, 2, 1}).Float("value", 0.25f);
  m.Node("Pad", {"x"}, {"r"}).Ints("pads", {0, 0, 1, 2, 0, 0, 2, 1}).Str("mode", "reflect");
  m.Output("y");
  m.Output("r");
  const auto r = ConvertModel(m);
  ASSERT_TRUE(r.proven) << r.RenderText();
}

}  // namespace
}  // namespace gpuclean
