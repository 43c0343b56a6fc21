// ctest-labels: litert
// Quantized ONNX models in onnxruntime's three formats convert to float
// fake-quant and prove against onnxruntime's integer kernels: QDQ pairs
// (static quantization, per-channel int8 weights), DynamicQuantizeLinear
// with ConvInteger and MatMulInteger (dynamic quantization, as the
// background-removal ISNet ships), and QLinearConv / QLinearMatMul
// (QOperator). A corrupted weight still fails; blocked quantization is one
// line.
#include <gtest/gtest.h>

#include <cmath>
#include <span>

#include "gpuclean/convert.h"
#include "gpuclean/error.h"
#include "onnx/onnx_model.h"
#include "onnx/onnx_test_model.h"
#include "support/test_support.h"

namespace gpuclean {
namespace {

using testing::kOnnxInt8;
using testing::kOnnxUint8;
using testing::OnnxTestModel;
using testing::RandomValues;

std::vector<int32_t> Codes(size_t n, uint32_t seed, int lo, int hi) {
  const std::vector<float> r = RandomValues(n, seed, 1.0f);
  std::vector<int32_t> out;
  for (float v : r)
    out.push_back(lo + static_cast<int32_t>(std::lround((v + 1.0f) * 0.5f * static_cast<float>(hi - lo))));
  return out;
}

convert::Result ConvertAndExpectProven(const OnnxTestModel& m, const std::string& file, testing::TempDir& dir) {
  convert::Result r = testing::ConvertWithoutTarget(m, file, dir);
  EXPECT_TRUE(r.report.proven) << r.report.RenderText();
  for (const auto& [op, count] : r.report.ops_out)
    EXPECT_TRUE(op != "QUANTIZE") << "a QUANTIZE op is left: " << r.report.RenderText();
  return r;
}

// onnxruntime's QDQ format: uint8 activations, per-channel int8 weights
// (axis 0), an int32 bias in units of x_scale * w_scale.
TEST(QuantizedModels, StaticQdqConvProves) {
  OnnxTestModel m;
  m.Input("x", {1, 3, 16, 16});
  m.InitF32("xs", {}, {2.0f / 255.0f});
  m.InitInts("xzp", kOnnxUint8, {}, {128});
  m.InitInts("wq", kOnnxInt8, {8, 3, 3, 3}, Codes(8 * 27, 41, -127, 127));
  std::vector<float> ws = RandomValues(8, 42, 0.004f);
  for (float& v : ws) v = std::fabs(v) + 0.002f;
  m.InitF32("ws", {8}, ws);
  m.InitInts("wzp", kOnnxInt8, {8}, std::vector<int32_t>(8, 0));
  std::vector<float> bs;
  for (float v : ws) bs.push_back(v * 2.0f / 255.0f);
  m.InitInts("bq", testing::kOnnxInt32, {8}, Codes(8, 43, -5000, 5000));
  m.InitF32("bs", {8}, bs);
  m.InitF32("ys", {}, {0.02f});
  m.InitInts("yzp", kOnnxUint8, {}, {0});
  m.Node("QuantizeLinear", {"x", "xs", "xzp"}, {"xq"});
  m.Node("DequantizeLinear", {"xq", "xs", "xzp"}, {"xd"});
  m.Node("DequantizeLinear", {"wq", "ws", "wzp"}, {"wd"}).Int("axis", 0);
  m.Node("DequantizeLinear", {"bq", "bs"}, {"bd"}).Int("axis", 0);
  m.Node("Conv", {"xd", "wd", "bd"}, {"c"}).Ints("pads", {1, 1, 1, 1});
  m.Node("Relu", {"c"}, {"r"});
  m.Node("QuantizeLinear", {"r", "ys", "yzp"}, {"rq"});
  m.Node("DequantizeLinear", {"rq", "ys", "yzp"}, {"y"});
  m.Output("y");
  testing::TempDir dir;
  ConvertAndExpectProven(m, "qdq.onnx", dir);
}

// onnxruntime's dynamic quantizer: each activation quantized to uint8 from
// its own range at run time, integer conv and matmul, then rescaled.
OnnxTestModel DynamicModel() {
  OnnxTestModel m;
  m.Input("x", {1, 3, 8, 8});
  m.InitInts("wq", kOnnxUint8, {8, 3, 3, 3}, Codes(8 * 27, 51, 0, 255));
  m.InitInts("wzp", kOnnxUint8, {}, {128});
  m.InitF32("wsc", {}, {0.01f});
  m.InitInts("mq", kOnnxUint8, {72, 10}, Codes(720, 52, 0, 255));
  m.InitInts("mzp", kOnnxUint8, {}, {120});
  m.InitF32("msc", {}, {0.02f});
  m.InitI64("flat", {2}, {1, 72});
  m.Node("DynamicQuantizeLinear", {"x"}, {"xq", "xs", "xzp"});
  m.Node("ConvInteger", {"xq", "wq", "xzp", "wzp"}, {"ci"}).Ints("strides", {2, 2});
  m.Node("Cast", {"ci"}, {"cf"}).Int("to", 1);
  m.Node("Mul", {"xs", "wsc"}, {"s"});
  m.Node("Mul", {"cf", "s"}, {"c"});
  m.Node("Relu", {"c"}, {"r"});
  m.Node("Reshape", {"r", "flat"}, {"rf"});
  m.Node("DynamicQuantizeLinear", {"rf"}, {"rq", "rs", "rzp"});
  m.Node("MatMulInteger", {"rq", "mq", "rzp", "mzp"}, {"mi"});
  m.Node("Cast", {"mi"}, {"mf"}).Int("to", 1);
  m.Node("Mul", {"rs", "msc"}, {"s2"});
  m.Node("Mul", {"mf", "s2"}, {"y"});
  m.Output("y");
  return m;
}

TEST(QuantizedModels, DynamicConvIntegerAndMatMulIntegerProveAndACorruptedWeightFails) {
  testing::TempDir dir;
  const convert::Result r = ConvertAndExpectProven(DynamicModel(), "dynamic.onnx", dir);
  // The folded integer weights (codes less their zero point) are exact
  // halves: kept as float16, not widened to float32.
  EXPECT_GE(r.report.half_weights_kept, 1) << r.report.RenderText();

  ir::Model corrupted = r.model;
  bool moved = false;
  for (ir::Tensor& t : corrupted.main().tensors) {
    if (moved || !t.is_const() || t.dtype != tfl::TensorType_FLOAT16 || t.num_elements() != 8 * 27) continue;
    std::vector<uint8_t> bytes(t.data->data(), t.data->data() + t.data->size());
    bytes[1] ^= 0x40;  // the first weight's exponent: a large change
    t.data = Bytes::Copy(bytes);
    moved = true;
  }
  ASSERT_TRUE(moved);
  convert::Options o;
  o.onnx_path = dir.file("dynamic.onnx");
  o.target = "none";
  EXPECT_FALSE(convert::ProveConverted(o.onnx_path, corrupted, o).proven);
}

TEST(QuantizedModels, QLinearConvAndQLinearMatMulProve) {
  OnnxTestModel m;
  m.Input("x", {1, 3, 16, 16});
  m.InitF32("xs", {}, {2.0f / 255.0f});
  m.InitInts("xzp", kOnnxUint8, {}, {128});
  m.InitInts("wq", kOnnxInt8, {8, 3, 3, 3}, Codes(8 * 27, 61, -127, 127));
  m.InitF32("ws", {8}, std::vector<float>(8, 0.004f));
  m.InitInts("wzp", kOnnxInt8, {8}, std::vector<int32_t>(8, 0));
  m.InitF32("ys", {}, {0.05f});
  m.InitInts("yzp", kOnnxUint8, {}, {0});
  m.InitInts("bq", testing::kOnnxInt32, {8}, Codes(8, 62, -3000, 3000));
  m.InitI64("flat", {2}, {1, 2048});
  m.InitInts("mq", kOnnxInt8, {2048, 10}, Codes(20480, 63, -127, 127));
  m.InitF32("ms", {}, {0.003f});
  m.InitInts("mzp", kOnnxInt8, {}, {0});
  m.InitF32("zs", {}, {0.1f});
  m.InitInts("zzp", kOnnxUint8, {}, {128});
  m.Node("QuantizeLinear", {"x", "xs", "xzp"}, {"xq"});
  m.Node("QLinearConv", {"xq", "xs", "xzp", "wq", "ws", "wzp", "ys", "yzp", "bq"}, {"cq"}).Ints("pads", {1, 1, 1, 1});
  m.Node("Reshape", {"cq", "flat"}, {"cf"});
  m.Node("QLinearMatMul", {"cf", "ys", "yzp", "mq", "ms", "mzp", "zs", "zzp"}, {"zq"});
  m.Node("DequantizeLinear", {"zq", "zs", "zzp"}, {"y"});
  m.Output("y");
  testing::TempDir dir;
  ConvertAndExpectProven(m, "qoperator.onnx", dir);
}

// The ONNX import fuzzer's find: a ConvInteger with one input read its
// missing weight (a heap overflow). Every form's required inputs are checked.
TEST(QuantizedModels, MissingRequiredInputsAreOneLine) {
  testing::TempDir dir;
  for (const std::string op :
       {"ConvInteger", "MatMulInteger", "QuantizeLinear", "DequantizeLinear", "QLinearConv", "QLinearMatMul"}) {
    OnnxTestModel m(15);
    m.Input("x", {1, 3, 8, 8});
    m.Node(op, {"x"}, {"y"});
    m.Output("y");
    try {
      onnx::Import(m.Write(dir.file(op + ".onnx")));
      ADD_FAILURE() << op << " with one input was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("is missing"), std::string::npos) << op << ": " << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
    }
  }
}

TEST(QuantizedModels, BlockedQuantizationIsOneLine) {
  OnnxTestModel m(21);
  m.Input("x", {4, 8});
  m.InitInts("wq", kOnnxInt8, {4, 8}, Codes(32, 71, -127, 127));
  m.InitF32("ws", {4, 2}, std::vector<float>(8, 0.01f));
  m.Node("DequantizeLinear", {"wq", "ws"}, {"w"}).Int("axis", 1).Int("block_size", 4);
  m.Node("Add", {"x", "w"}, {"y"});
  m.Output("y");
  testing::TempDir dir;
  try {
    onnx::Import(m.Write(dir.file("blocked.onnx")));
    ADD_FAILURE() << "blocked quantization was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("blocked quantization"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
  }
}

}  // namespace
}  // namespace gpuclean
