// ctest-labels: litert
// fp16 models (PyTorch's `.half()` exports: float16 initializers widened by
// Casts): the weights stay float16 in the .tflite (+ DEQUANTIZE, lossless),
// so the file is not twice the original, and the result is proven against
// onnxruntime. An fp32 model's weights are left as they are. Float16 graph
// inputs and outputs stay float16 in the .tflite; values onnxruntime keeps
// in float16 between nodes are proven under the half-storage floor, which
// still fails a corrupted weight.
#include <gtest/gtest.h>

#include <span>

#include "gpuclean/convert.h"
#include "onnx/onnx_test_model.h"
#include "support/test_support.h"

namespace gpuclean {
namespace {

using testing::OnnxTestModel;
using testing::RandomValues;

int CountHalfConstants(const ir::Model& m) {
  int n = 0;
  for (const ir::Tensor& t : m.main().tensors) n += t.is_const() && t.dtype == tfl::TensorType_FLOAT16;
  return n;
}

TEST(HalfPrecision, Fp16WeightsBehindCastsStayHalf) {
  OnnxTestModel m;
  m.Input("x", {1, 64});
  m.InitF16("w16", {64, 256}, RandomValues(64 * 256, 11, 0.2f));
  m.InitF16("b16", {256}, RandomValues(256, 12, 0.2f));
  m.Node("Cast", {"w16"}, {"w"}).Int("to", 1);
  m.Node("Cast", {"b16"}, {"b"}).Int("to", 1);
  m.Node("MatMul", {"x", "w"}, {"xw"});
  m.Node("Add", {"xw", "b"}, {"y"});
  m.Output("y");
  testing::TempDir dir;
  convert::Options o;
  o.onnx_path = m.Write(dir.file("half.onnx"));
  o.target = "none";
  const convert::Result r = convert::Convert(o);
  EXPECT_TRUE(r.report.proven) << r.report.RenderText();
  EXPECT_EQ(r.report.half_weights_kept, 2);
  EXPECT_EQ(CountHalfConstants(r.model), 2);
  // 64*256 halves and the rest: well under the 64 KiB the fp32 weights take.
  EXPECT_LT(r.report.tflite_bytes, 64u * 256u * 4u / 2u + 8192u);
  EXPECT_NE(r.report.RenderText().find("kept as float16"), std::string::npos);
}

TEST(HalfPrecision, Fp32WeightsAreLeftAsTheyAre) {
  OnnxTestModel m;
  m.Input("x", {1, 8});
  m.InitF32("w", {8, 4}, {0.5f, 1, 2, 0.25f, 0, 1, 1, 1, 0.5f, 1, 2, 0.25f, 0, 1, 1, 1,
                          0.5f, 1, 2, 0.25f, 0, 1, 1, 1, 0.5f, 1, 2, 0.25f, 0, 1, 1, 1});
  m.Node("MatMul", {"x", "w"}, {"y"});
  m.Output("y");
  testing::TempDir dir;
  convert::Options o;
  o.onnx_path = m.Write(dir.file("fp32.onnx"));
  o.target = "none";
  const convert::Result r = convert::Convert(o);
  EXPECT_TRUE(r.report.proven);
  EXPECT_EQ(r.report.half_weights_kept, 0);
  EXPECT_EQ(CountHalfConstants(r.model), 0) << "an fp32 model's weights (here all exact halves) were narrowed";
}

// A `.half()` export end to end: float16 input, weights and output.
TEST(HalfPrecision, Fp16InputsAndOutputsStayHalf) {
  OnnxTestModel m;
  m.Input("x", {1, 3, 16, 16}, testing::kOnnxFloat16);
  m.InitF16("w", {8, 3, 3, 3}, RandomValues(8 * 27, 21, 0.5f));
  m.InitF16("b", {8}, RandomValues(8, 22, 0.5f));
  m.Node("Conv", {"x", "w", "b"}, {"c"}).Ints("pads", {1, 1, 1, 1});
  m.Node("Relu", {"c"}, {"r"});
  m.Node("Mul", {"r", "r"}, {"y"});
  m.Output("y", testing::kOnnxFloat16);
  testing::TempDir dir;
  convert::Options o;
  o.onnx_path = m.Write(dir.file("full_half.onnx"));
  o.target = "none";
  const convert::Result r = convert::Convert(o);
  EXPECT_TRUE(r.report.proven) << r.report.RenderText();
  const ir::Subgraph& g = r.model.main();
  ASSERT_EQ(g.inputs.size(), 1u);
  ASSERT_EQ(g.outputs.size(), 1u);
  EXPECT_EQ(g.tensors[g.inputs[0]].dtype, tfl::TensorType_FLOAT16);
  EXPECT_EQ(g.tensors[g.outputs[0]].dtype, tfl::TensorType_FLOAT16);
  EXPECT_EQ(r.report.half_weights_kept, 2);
}

// onnxconverter-common's float16 models (the background-removal ISNet)
// Cast an fp32 Resize's output to float16 into a Concat. onnxruntime's CPU
// provider runs that Concat in float16, so the value is rounded there; the
// converted graph keeps float32. That is 1e-3 relative, over the fixed
// bound: the half-storage floor lets it through, and a weight moved by 0.05
// still fails.
TEST(HalfPrecision, RoundingWhereOnnxruntimeKeepsHalfProvesUnderTheHalfStorageFloor) {
  OnnxTestModel m;
  m.Input("x", {1, 4, 8, 8});
  m.InitF32("w1", {8, 4, 3, 3}, RandomValues(8 * 36, 31, 1.0f));
  m.InitF32("w2", {4, 16, 1, 1}, RandomValues(4 * 16, 32, 1.0f));
  m.Node("Conv", {"x", "w1"}, {"c"}).Ints("pads", {1, 1, 1, 1});
  m.Node("Cast", {"c"}, {"c16"}).Int("to", 10);
  m.Node("Neg", {"c"}, {"n"});
  m.Node("Cast", {"n"}, {"n16"}).Int("to", 10);
  m.Node("Concat", {"c16", "n16"}, {"cat16"}).Int("axis", 1);
  m.Node("Cast", {"cat16"}, {"cat"}).Int("to", 1);
  m.Node("Conv", {"cat", "w2"}, {"y"});
  m.Output("y");
  testing::TempDir dir;
  convert::Options o;
  o.onnx_path = m.Write(dir.file("concat_half.onnx"));
  o.target = "none";
  const convert::Result r = convert::Convert(o);
  ASSERT_TRUE(r.report.proven) << r.report.RenderText();
  bool floor_used = false;
  for (const convert::OutputProof& p : r.report.proof) {
    EXPECT_GT(p.half_storage_floor, 0) << r.report.RenderText();
    floor_used = floor_used || p.bound > r.report.atol;
  }
  EXPECT_TRUE(floor_used) << "proved under the fixed bound: onnxruntime no longer rounds in its Concat\n"
                          << r.report.RenderText();

  ir::Model corrupted = r.model;
  ir::Tensor* w = testing::FirstConstInput(corrupted, tfl::BuiltinOperator_CONV_2D, 1);
  ASSERT_NE(w, nullptr);
  std::vector<float> v(w->data->as<float>().begin(), w->data->as<float>().end());
  v[0] += 0.05f;
  w->data = Bytes::FromValues(std::span<const float>(v));
  const convert::Report bad = convert::ProveConverted(o.onnx_path, corrupted, o);
  EXPECT_FALSE(bad.proven) << bad.RenderText();
}

}  // namespace
}  // namespace gpuclean
