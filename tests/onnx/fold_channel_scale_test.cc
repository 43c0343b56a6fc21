// ctest-labels: litert
// A convolution's or dense layer's output times a constant per channel, then
// plus one (BatchNormalization as Paddle2ONNX exports it, or a Mul and Add
// written out), becomes that op's weights and bias, proven against
// onnxruntime, the result run on LiteRT.js against our interpreter. A scale
// that is not per channel, an output read twice, and weights that are a
// quantized model's whole-number codes stay as they are.
#include <gtest/gtest.h>

#include <cstring>

#include "gpuclean/convert.h"
#include "onnx/onnx_test_model.h"
#include "onnx/op_test_util.h"
#include "support/conformance.h"
#include "support/test_support.h"

namespace gpuclean {
namespace {

using testing::OnnxTestModel;
using testing::RandomValues;

npy::Array Image(const std::vector<int64_t>& shape, uint32_t seed) {
  npy::Array x;
  x.dtype = tfl::TensorType_FLOAT32;
  x.shape = shape;
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  const std::vector<float> values = RandomValues(n, seed, 2.0f);
  x.data.resize(values.size() * sizeof(float));
  std::memcpy(x.data.data(), values.data(), x.data.size());
  return x;
}

// x [1, 6, 9, 9] -> Conv (group 1 or 6) -> BatchNormalization -> Relu.
OnnxTestModel ConvBatchNorm(int64_t group, bool conv_bias) {
  OnnxTestModel m;
  m.Input("x", {1, 6, 9, 9});
  const int64_t in_per_group = 6 / group;
  m.InitF32("w", {6, in_per_group, 3, 3}, RandomValues(6 * in_per_group * 9, 1, 0.5f));
  std::vector<std::string> conv_in = {"x", "w"};
  if (conv_bias) {
    m.InitF32("cb", {6}, RandomValues(6, 2));
    conv_in.push_back("cb");
  }
  m.Node("Conv", conv_in, {"c"}).Ints("pads", {1, 1, 1, 1}).Int("group", group);
  std::vector<float> var = RandomValues(6, 6, 0.5f);
  for (float& v : var) v += 0.6f;
  m.InitF32("gamma", {6}, RandomValues(6, 3, 1.5f));
  m.InitF32("beta", {6}, RandomValues(6, 4));
  m.InitF32("mean", {6}, RandomValues(6, 5));
  m.InitF32("var", {6}, var);
  m.Node("BatchNormalization", {"c", "gamma", "beta", "mean", "var"}, {"n"});
  m.Node("Relu", {"n"}, {"y"});
  m.Output("y");
  return m;
}

TEST(FoldChannelScale, ConvolutionAndBatchNormBecomeOneConvolution) {
  testing::TempDir dir;
  for (const auto& [group, op] : {std::pair{1, "CONV_2D"}, std::pair{6, "DEPTHWISE_CONV_2D"}})
    for (bool conv_bias : {false, true}) {
      SCOPED_TRACE(std::string(op) + (conv_bias ? " with a bias" : " without a bias"));
      const convert::Result r = testing::ConvertWithoutTarget(ConvBatchNorm(group, conv_bias), "bn.onnx", dir);
      ASSERT_TRUE(r.report.proven) << r.report.RenderText();
      EXPECT_EQ(testing::CountOp(r.report, "MUL"), 0) << r.report.RenderText();
      EXPECT_EQ(testing::CountOp(r.report, "ADD"), 0) << r.report.RenderText();
      EXPECT_EQ(testing::CountOp(r.report, "RELU"), 0) << r.report.RenderText();
      EXPECT_EQ(testing::CountOp(r.report, op), 1) << r.report.RenderText();
      testing::ExpectMatchesLiteRt(r.model, {Image({1, 6, 9, 9}, 7)});
    }
}

// x [4, 8] @ w [8, 5] * s [5] + t [5].
OnnxTestModel DenseScaled(const std::vector<int64_t>& scale_shape, int64_t scale_count) {
  OnnxTestModel m;
  m.Input("x", {4, 8});
  m.InitF32("w", {8, 5}, RandomValues(40, 11, 0.5f));
  m.Node("MatMul", {"x", "w"}, {"xw"});
  m.InitF32("s", scale_shape, RandomValues(scale_count, 12, 2.0f));
  m.Node("Mul", {"xw", "s"}, {"scaled"});
  m.InitF32("t", {5}, RandomValues(5, 13));
  m.Node("Add", {"scaled", "t"}, {"y"});
  m.Output("y");
  return m;
}

TEST(FoldChannelScale, DenseLayerTimesARowOrAScalarBecomesOneFullyConnected) {
  testing::TempDir dir;
  for (const auto& [shape, count] : {std::pair{std::vector<int64_t>{5}, 5}, std::pair{std::vector<int64_t>{}, 1}}) {
    SCOPED_TRACE(count == 1 ? "a scalar" : "a row");
    const convert::Result r = testing::ConvertWithoutTarget(DenseScaled(shape, count), "dense.onnx", dir);
    ASSERT_TRUE(r.report.proven) << r.report.RenderText();
    EXPECT_EQ(testing::CountOp(r.report, "MUL"), 0) << r.report.RenderText();
    EXPECT_EQ(testing::CountOp(r.report, "ADD"), 0) << r.report.RenderText();
    EXPECT_EQ(testing::CountOp(r.report, "FULLY_CONNECTED"), 1) << r.report.RenderText();
    testing::ExpectMatchesLiteRt(r.model, {Image({4, 8}, 14)});
  }
}

TEST(FoldChannelScale, AScaleNotPerChannelOrAnOutputReadTwiceStays) {
  testing::TempDir dir;
  const convert::Result full = testing::ConvertWithoutTarget(DenseScaled({4, 5}, 20), "full.onnx", dir);
  ASSERT_TRUE(full.report.proven) << full.report.RenderText();
  EXPECT_EQ(testing::CountOp(full.report, "MUL"), 1) << full.report.RenderText();

  OnnxTestModel twice = DenseScaled({5}, 5);
  twice.Output("xw");
  const convert::Result r = testing::ConvertWithoutTarget(twice, "twice.onnx", dir);
  ASSERT_TRUE(r.report.proven) << r.report.RenderText();
  EXPECT_EQ(testing::CountOp(r.report, "MUL"), 1) << r.report.RenderText();
}

// ConvInteger's lowering: whole-number weights (codes minus their zero
// point) times the dequantizing scale. Folding the scale into them would
// hide the codes from dot-scale-first and the 8-bit convolution.
TEST(FoldChannelScale, WholeNumberWeightsKeepTheirScaleApart) {
  OnnxTestModel m;
  m.Input("x", {1, 4, 6, 6});
  std::vector<float> codes = RandomValues(4 * 4 * 9, 21, 100.0f);
  for (float& c : codes) c = std::nearbyint(c);
  m.InitF32("w", {4, 4, 3, 3}, codes);
  m.Node("Conv", {"x", "w"}, {"c"}).Ints("pads", {1, 1, 1, 1});
  m.InitF32("s", {1, 4, 1, 1}, RandomValues(4, 22, 0.01f));
  m.Node("Mul", {"c", "s"}, {"y"});
  m.Output("y");
  testing::TempDir dir;
  const convert::Result r = testing::ConvertWithoutTarget(m, "codes.onnx", dir);
  ASSERT_TRUE(r.report.proven) << r.report.RenderText();
  EXPECT_EQ(testing::CountOp(r.report, "MUL"), 1) << r.report.RenderText();
}

}  // namespace
}  // namespace gpuclean
