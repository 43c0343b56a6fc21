// ctest-labels: litert
// convert's check in the target's arithmetic judges the outputs by their
// task, as `check` does: a classifier whose top class survives fp16 is
// written even where its logits correlate below 0.999; one whose logits
// overflow half is not, and the report names the gate that failed.
#include <gtest/gtest.h>

#include <vector>

#include "onnx/op_test_util.h"

namespace gpuclean::testing {
namespace {

// logits = 1000 + bias + 0.3 * x over 1000 classes, class 7 ahead by `lead`.
// Half's spacing at 1000 is 0.5, so the 0.3 * x part is mostly rounded
// away: fp16 keeps the ranking's head and loses the tail's order.
OnnxTestModel Classifier(float lead, float gain) {
  OnnxTestModel m;
  m.Input("x", {1, 1000});
  std::vector<float> bias(1000, 1000.0f);
  bias[7] += lead;
  m.InitF32("gain", {}, {gain});
  m.InitF32("bias", {1, 1000}, bias);
  m.Node("Mul", {"x", "gain"}, {"scaled"});
  m.Node("Add", {"scaled", "bias"}, {"logits"});
  m.Output("logits");
  return m;
}

convert::Result ConvertFor(const OnnxTestModel& m, const TempDir& dir, const std::string& target) {
  convert::Options o;
  o.onnx_path = m.Write(dir.file("classifier.onnx"));
  o.output_path = dir.file("classifier.tflite");
  o.target = target;
  return convert::Convert(o);
}

TEST(Fp16TaskVerdict, AClassifierWhoseTopClassHoldsIsWrittenBelowTheCorrelationBar) {
  TempDir dir;
  for (const std::string target : {"mldrift-cl@2.2.0", "mldrift-webgpu@2.5.3"}) {
    const convert::Result r = ConvertFor(Classifier(10.0f, 0.3f), dir, target);
    const std::string text = r.report.RenderText();
    ASSERT_TRUE(r.report.proven) << text;
    const convert::TargetReport& t = r.report.target;
    ASSERT_FALSE(t.numeric_model.empty()) << text;
    EXPECT_LT(t.fp16_correlation, 0.999) << "the logits' tail should blur in half: " << text;
    ASSERT_EQ(t.fp16_gates.size(), 1u) << text;
    EXPECT_NE(t.fp16_gates[0].gate.find("argmax"), std::string::npos) << text;
    EXPECT_TRUE(t.fp16_gates[0].passed) << text;
    EXPECT_FALSE(t.fp16_broken) << text;
    EXPECT_TRUE(r.report.written) << text;
    EXPECT_NE(text.find("task gate ok"), std::string::npos) << text;
  }
}

// A given input is proof set 1, and the report says so rather than "seed 1".
TEST(Fp16TaskVerdict, TheGivenInputIsNamedInTheProof) {
  TempDir dir;
  convert::Options o;
  o.onnx_path = Classifier(10.0f, 0.3f).Write(dir.file("classifier.onnx"));
  o.target = "none";
  npy::Array x;
  x.dtype = tfl::TensorType_FLOAT32;
  x.shape = {1, 1000};
  x.data.assign(1000 * 4, 0);
  o.proof_inputs["x"] = x;
  const convert::Result r = convert::Convert(o);
  const std::string text = r.report.RenderText();
  ASSERT_TRUE(r.report.proven) << text;
  EXPECT_NE(text.find("proof set 1 (--input) logits"), std::string::npos) << text;
  EXPECT_NE(text.find("proof seed 2 logits"), std::string::npos) << text;
}

// Logits past 65504 become inf in half: the task gate fails, whatever the
// argmax of the values still finite says, and nothing is written.
TEST(Fp16TaskVerdict, LogitsThatOverflowHalfFailTheirGateAndAreNotWritten) {
  TempDir dir;
  const convert::Result r = ConvertFor(Classifier(10.0f, 1e5f), dir, "mldrift-cl@2.2.0");
  const std::string text = r.report.RenderText();
  ASSERT_TRUE(r.report.proven) << text;
  const convert::TargetReport& t = r.report.target;
  EXPECT_TRUE(t.fp16_broken) << text;
  EXPECT_FALSE(r.report.written) << text;
  EXPECT_NE(text.find("fail their task gate: logits: argmax"), std::string::npos) << text;
}

}  // namespace
}  // namespace gpuclean::testing
