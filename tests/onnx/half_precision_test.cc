// fp16 models (PyTorch's `.half()` exports: float16 initializers widened by
// Casts): the weights stay float16 in the .tflite (+ DEQUANTIZE, lossless),
// so the file is not twice the original, and the result is proven against
// onnxruntime. An fp32 model's weights are left as they are.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace gpuclean
