// ctest-labels: litert
// Mod (fmod 0/1, floats and integers), Round (half to even), Shrink,
// LpNormalization, IsInf/IsNaN, proven
// against onnxruntime.
#include <gtest/gtest.h>

#include "onnx/op_test_util.h"

namespace gpuclean {
namespace {

using testing::ConvertModel;
using testing::OnnxTestModel;

TEST(MathExtra, ModFloatAndInteger) {
  OnnxTestModel m;
  m.Input("x", {4, 8});
  m.InitF32("d", {8}, {0.3f, -0.3f, 0.7f, -0.7f, 1.1f, -0.45f, 0.25f, 2.0f});
  m.InitF32("big", {}, {7.3f});
  m.Node("Mul", {"x", "big"}, {"xb"});
  m.Node("Mod", {"xb", "d"}, {"fmod"}).Int("fmod", 1);
  m.Input("z", {4, 8});
  testing::IntsFrom(m, "z", "zi", -20, 20);
  m.InitI64("di", {8}, {3, -3, 5, -5, 7, -2, 1, 4});
  m.Node("Mod", {"zi", "di"}, {"imod"});
  m.Node("Mod", {"zi", "di"}, {"ifmod"}).Int("fmod", 1);
  m.Output("fmod");
  m.Output("imod", testing::kOnnxInt64);
  m.Output("ifmod", testing::kOnnxInt64);
  const auto r = ConvertModel(m);
  EXPECT_TRUE(r.proven) << r.RenderText();
}

TEST(MathExtra, RoundHalfToEvenAndShrink) {
  OnnxTestModel m;
  m.Input("x", {3, 16});
  // x * 6 has plenty of non-ties; adding halves on a grid makes exact ties.
  m.InitF32("six", {}, {6.0f});
  m.Node("Mul", {"x", "six"}, {"x6"});
  m.Node("Round", {"x6"}, {"r"});
  m.Node("Floor", {"x6"}, {"f"});
  m.InitF32("half", {}, {0.5f});
  m.Node("Add", {"f", "half"}, {"ties"});
  m.Node("Round", {"ties"}, {"rt"});
  m.Node("Shrink", {"x"}, {"s_default"});
  m.Node("Shrink", {"x"}, {"s_bias"}).Float("lambd", 0.3f).Float("bias", 0.2f);
  m.Node("LpNormalization", {"x"}, {"l2"});
  m.Node("LpNormalization", {"x"}, {"l1"}).Int("axis", 0).Int("p", 1);
  for (const char* o : {"r", "rt", "s_default", "s_bias", "l2", "l1"}) m.Output(o);
  m.InitF32("zero", {}, {0.0f});
  m.Node("Div", {"x", "zero"}, {"inf"});  // +-inf
  m.Node("IsInf", {"inf"}, {"isinf"});
  m.Node("IsInf", {"inf"}, {"isposinf"}).Int("detect_negative", 0);
  m.Node("IsNaN", {"x"}, {"isnan"});
  for (const char* o : {"isinf", "isposinf", "isnan"}) m.Output(o, testing::kOnnxBool);
  const auto r = ConvertModel(m);
  EXPECT_TRUE(r.proven) << r.RenderText();
}

}  // namespace
}  // namespace gpuclean
