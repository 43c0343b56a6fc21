// ctest-labels: litert
// Control flow with a static answer (src/onnx/ops/control_flow.cc) and
// pinned inputs (--input-value): an If on a pinned sample rate is inlined
// (the silero VAD shape: weights in Constant nodes inside each branch), an
// If on a run-time condition computes both branches and selects, a Loop
// with a known trip count is unrolled, and what has no static graph is one
// clear refusal. Proven against onnxruntime.
#include <gtest/gtest.h>

#include "gpuclean/convert.h"
#include "gpuclean/error.h"
#include "onnx/onnx_test_model.h"
#include "support/test_support.h"

namespace gpuclean {
namespace {

using testing::OnnxTestModel;
using testing::RandomValues;

// y = x * w16 when sr == 16000, else x + w8 followed by a Relu.
OnnxTestModel SampleRateModel() {
  OnnxTestModel then_g, else_g;
  then_g.Node("Constant", {}, {"w16"}).TensorF32("value", {1, 8}, RandomValues(8, 3));
  then_g.Node("Mul", {"x", "w16"}, {"then_y"});
  then_g.Output("then_y");
  else_g.Node("Constant", {}, {"w8"}).TensorF32("value", {1, 8}, RandomValues(8, 4));
  else_g.Node("Add", {"x", "w8"}, {"else_sum"});
  else_g.Node("Relu", {"else_sum"}, {"else_y"});
  else_g.Output("else_y");
  OnnxTestModel m(16);
  m.Input("x", {1, 8});
  m.Input("sr", {}, testing::kOnnxInt64);
  m.Node("Constant", {}, {"rate"}).TensorI64("value", {}, {16000});
  m.Node("Equal", {"sr", "rate"}, {"is16k"});
  m.Node("If", {"is16k"}, {"y"}).Graph("then_branch", then_g).Graph("else_branch", else_g);
  m.Output("y");
  return m;
}

class PinnedSampleRate : public ::testing::TestWithParam<int> {};

TEST_P(PinnedSampleRate, InlinesTheBranchItSelects) {
  testing::TempDir dir;
  convert::Options o;
  o.onnx_path = SampleRateModel().Write(dir.file("vad_like.onnx"));
  o.target = "none";
  o.input_values["sr"] = {static_cast<double>(GetParam())};
  const convert::Result r = convert::Convert(o);
  EXPECT_TRUE(r.report.proven) << r.report.RenderText();
  ASSERT_EQ(r.report.pinned_inputs.size(), 1u);
  EXPECT_EQ(r.report.pinned_inputs[0], "sr=" + std::to_string(GetParam()));
  EXPECT_EQ(r.model.main().inputs.size(), 1u) << "the pinned input is still an input";
  EXPECT_NE(r.report.RenderText().find("pinned inputs"), std::string::npos);
  const auto& ops = r.report.ops_out;
  EXPECT_EQ(ops.count("ADD") > 0, GetParam() != 16000) << "the other branch was lowered";
  EXPECT_EQ(ops.count("MUL") > 0, GetParam() == 16000) << "the other branch was lowered";
}

INSTANTIATE_TEST_SUITE_P(Rates, PinnedSampleRate, ::testing::Values(16000, 8000));

TEST(ControlFlow, AnIfOnARunTimeConditionSelectsBetweenBothBranches) {
  OnnxTestModel then_g, else_g;
  then_g.Node("Mul", {"x", "x"}, {"then_y"});
  then_g.Output("then_y");
  else_g.Node("Neg", {"x"}, {"else_y"});
  else_g.Output("else_y");
  OnnxTestModel m;
  m.Input("x", {1, 8});
  m.Node("ReduceSum", {"x"}, {"s"}).Int("keepdims", 0);
  m.InitF32("zero", {}, {0.0f});
  m.Node("Greater", {"s", "zero"}, {"positive"});
  m.Node("If", {"positive"}, {"y"}).Graph("then_branch", then_g).Graph("else_branch", else_g);
  m.Output("y");
  testing::TempDir dir;
  convert::Options o;
  o.onnx_path = m.Write(dir.file("runtime_if.onnx"));
  o.target = "none";
  o.proof_seeds = 6;  // both signs of the sum among the seeded inputs
  const convert::Result r = convert::Convert(o);
  EXPECT_TRUE(r.report.proven) << r.report.RenderText();
}

TEST(ControlFlow, BranchesOfDifferentShapesOnARunTimeConditionAreRefused) {
  OnnxTestModel then_g, else_g;
  then_g.Node("Identity", {"x"}, {"then_y"});
  then_g.Output("then_y");
  else_g.InitI64("axes", {1}, {1});
  else_g.Node("ReduceSum", {"x", "axes"}, {"else_y"});
  else_g.Output("else_y");
  OnnxTestModel m;
  m.Input("x", {1, 8});
  m.Input("flag", {}, testing::kOnnxBool);
  m.Node("If", {"flag"}, {"y"}).Graph("then_branch", then_g).Graph("else_branch", else_g);
  m.Output("y");
  testing::TempDir dir;
  convert::Options o;
  o.onnx_path = m.Write(dir.file("shapes.onnx"));
  try {
    convert::Convert(o);
    FAIL() << "converted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("--input-value"), std::string::npos) << e.what();
  }
  // Pinned, the same model converts.
  o.input_values["flag"] = {0};
  o.target = "none";
  EXPECT_TRUE(convert::Convert(o).report.proven);
}

// for i in range(3): x = 2x + i, each x stacked: a Loop with a constant
// trip count, a carried value and a scan output.
OnnxTestModel LoopModel(bool runtime_trips) {
  OnnxTestModel body;
  body.Input("i", {}, testing::kOnnxInt64);
  body.Input("cond_in", {}, testing::kOnnxBool);
  body.Input("x_in", {1, 4});
  body.InitF32("two", {}, {2.0f});
  body.Node("Cast", {"i"}, {"fi"}).Int("to", 1);
  body.Node("Mul", {"x_in", "two"}, {"doubled"});
  body.Node("Add", {"doubled", "fi"}, {"x_out"});
  body.Node("Identity", {"cond_in"}, {"cond_out"});
  body.Node("Identity", {"x_out"}, {"scan_out"});
  body.Output("cond_out", testing::kOnnxBool);
  body.Output("x_out");
  body.Output("scan_out");
  OnnxTestModel m;
  m.Input("x", {1, 4});
  if (runtime_trips)
    m.Input("trips", {}, testing::kOnnxInt64);
  else
    m.InitI64("trips", {}, {3});
  m.Node("Loop", {"trips", "", "x"}, {"x_final", "stacked"}).Graph("body", body);
  m.Output("x_final");
  m.Output("stacked");
  return m;
}

TEST(ControlFlow, ALoopWithAKnownTripCountIsUnrolled) {
  testing::TempDir dir;
  convert::Options o;
  o.onnx_path = LoopModel(false).Write(dir.file("loop.onnx"));
  o.target = "none";
  const convert::Result r = convert::Convert(o);
  EXPECT_TRUE(r.report.proven) << r.report.RenderText();
  // Pinned at convert time, a trip count given as an input unrolls too.
  convert::Options pinned;
  pinned.onnx_path = LoopModel(true).Write(dir.file("loop_input.onnx"));
  pinned.target = "none";
  pinned.input_values["trips"] = {2};
  EXPECT_TRUE(convert::Convert(pinned).report.proven);
  pinned.input_values.clear();
  try {
    convert::Convert(pinned);
    FAIL() << "a run-time trip count converted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("--input-value"), std::string::npos) << e.what();
  }
}

TEST(InputValue, MistakesAreUsageErrors) {
  testing::TempDir dir;
  convert::Options o;
  o.onnx_path = SampleRateModel().Write(dir.file("vad_like.onnx"));
  o.input_values["rate"] = {1};
  EXPECT_THROW(
      {
        try {
          convert::Convert(o);
        } catch (const Error& e) {
          EXPECT_EQ(e.kind(), ErrorKind::kUsage);
          throw;
        }
      },
      Error);
  o.input_values = {{"sr", {1, 2}}};
  try {
    convert::Convert(o);
    FAIL() << "two values for a scalar converted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(std::string(e.what()).find("2 value(s) given, the input holds 1"), std::string::npos) << e.what();
  }
  EXPECT_THROW(convert::ParseInputValues({"sr=16k"}), Error);
  EXPECT_THROW(convert::ParseInputValues({"=1"}), Error);
  EXPECT_EQ(convert::ParseInputValues({"sr=16000", "state=0,0.5"}).at("state"), (std::vector<double>{0, 0.5}));
}

}  // namespace
}  // namespace gpuclean
