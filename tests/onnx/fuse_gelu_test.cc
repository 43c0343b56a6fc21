// ctest-labels: litert
// Exact GELU as exporters write it becomes TFLite's one GELU op (proven
// against onnxruntime), in each operand order the exporters use; a near miss
// (another constant, an intermediate read twice) keeps the decomposed form.
#include <gtest/gtest.h>

#include "gpuclean/convert.h"
#include "onnx/onnx_test_model.h"
#include "support/test_support.h"

namespace gpuclean {
namespace {

using testing::OnnxTestModel;

enum class Form { kTorch, kHalfFirst, kHalfOfSum };

OnnxTestModel GeluModel(Form form, float inv_sqrt2_or_sqrt2 = 1.41421356f, bool read_twice = false) {
  OnnxTestModel m;
  m.Input("x", {1, 8, 6, 6});
  m.InitF32("c", {}, {inv_sqrt2_or_sqrt2});
  m.InitF32("one", {}, {1.0f});
  m.InitF32("half", {}, {0.5f});
  if (form == Form::kHalfFirst)
    m.Node("Mul", {"x", "c"}, {"d"});  // c is 1/sqrt2 here
  else
    m.Node("Div", {"x", "c"}, {"d"});
  m.Node("Erf", {"d"}, {"e"});
  m.Node("Add", {"one", "e"}, {"p"});
  switch (form) {
    case Form::kTorch:
      m.Node("Mul", {"x", "p"}, {"xp"});
      m.Node("Mul", {"xp", "half"}, {"y"});
      break;
    case Form::kHalfFirst:
      m.Node("Mul", {"x", "half"}, {"hx"});
      m.Node("Mul", {"hx", "p"}, {"y"});
      break;
    case Form::kHalfOfSum:
      m.Node("Mul", {"p", "half"}, {"hp"});
      m.Node("Mul", {"hp", "x"}, {"y"});
      break;
  }
  m.Output("y");
  if (read_twice) {
    m.Node("Relu", {"e"}, {"e2"});
    m.Output("e2");
  }
  return m;
}

convert::Result ConvertProven(const OnnxTestModel& m, const std::string& name, testing::TempDir& dir) {
  convert::Result r = testing::ConvertWithoutTarget(m, name, dir);
  EXPECT_TRUE(r.report.proven) << r.report.RenderText();
  return r;
}

int Count(const convert::Result& r, const std::string& op) {
  const auto it = r.report.ops_out.find(op);
  return it == r.report.ops_out.end() ? 0 : it->second;
}

TEST(FuseExactGelu, EachExportedFormBecomesOneGelu) {
  testing::TempDir dir;
  for (const auto& [form, c, name] : {std::tuple{Form::kTorch, 1.41421356f, "torch.onnx"},
                                      std::tuple{Form::kHalfFirst, 0.70710678f, "half_first.onnx"},
                                      std::tuple{Form::kHalfOfSum, 1.41421356f, "half_of_sum.onnx"}}) {
    const convert::Result r = ConvertProven(GeluModel(form, c), name, dir);
    EXPECT_EQ(Count(r, "GELU"), 1) << name << "\n" << r.report.RenderText();
    EXPECT_EQ(Count(r, "EXP"), 0) << name << ": the decomposed erf is left";
  }
}

TEST(FuseExactGelu, NearMissesKeepTheDecomposedForm) {
  testing::TempDir dir;
  const convert::Result other_constant = ConvertProven(GeluModel(Form::kTorch, 1.5f), "other_constant.onnx", dir);
  EXPECT_EQ(Count(other_constant, "GELU"), 0);
  const convert::Result read_twice = ConvertProven(GeluModel(Form::kTorch, 1.41421356f, true), "read_twice.onnx", dir);
  EXPECT_EQ(Count(read_twice, "GELU"), 0);
}

}  // namespace
}  // namespace gpuclean
