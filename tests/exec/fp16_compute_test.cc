// The fp16-compute numeric mode: binary16 rounding, and the failure
// signatures it must reproduce on the host (docs/numerics.md): an
// accumulator passing 65504 becomes inf even when the result would fit, and a
// long half-precision sum stalls once its spacing exceeds the addends.
#include <gtest/gtest.h>

#include <fp16.h>

#include <cmath>
#include <cstring>
#include <random>

#include "exec/kernels/fp16_compute.h"
#include "gpuclean/builder.h"
#include "support/conformance.h"
#include "support/test_support.h"

namespace gpuclean {
namespace {

using builder::GraphBuilder;
using exec::Precision;
constexpr ir::DType kF32 = tfl::TensorType_FLOAT32;

float ReferenceRound(float x) { return fp16_ieee_to_fp32_value(fp16_ieee_from_fp32_value(x)); }

TEST(Fp16Compute, RoundMatchesIeeeConversionEverywhere) {
  std::mt19937 rng(5);
  auto check = [](uint32_t bits) {
    float x;
    std::memcpy(&x, &bits, 4);
    const float got = exec::kernels::fp16::Round(x), want = ReferenceRound(x);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << bits;
    } else {
      ASSERT_EQ(std::memcmp(&got, &want, 4), 0) << "x=" << x << " bits " << bits << " got " << got << " want " << want;
    }
  };
  for (int i = 0; i < 2000000; ++i) check(rng());
  // Every half value, and the floats just around each one and each midpoint.
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float v = fp16_ieee_to_fp32_value(static_cast<uint16_t>(h));
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    for (int d = -2; d <= 2; ++d) check(bits + d);
    check(bits + 0x1000);  // the midpoint to the next half (normal range)
  }
  EXPECT_EQ(exec::kernels::fp16::Round(65519.0f), 65504.0f);
  EXPECT_TRUE(std::isinf(exec::kernels::fp16::Round(65520.0f)));
}

std::vector<float> Values(const npy::Array& a) {
  std::vector<float> v(static_cast<size_t>(a.num_elements()));
  std::memcpy(v.data(), a.data.data(), a.data.size());
  return v;
}

npy::Array F32(std::vector<int32_t> shape, const std::vector<float>& values) {
  npy::Array a;
  a.dtype = kF32;
  a.shape.assign(shape.begin(), shape.end());
  a.data.resize(values.size() * 4);
  std::memcpy(a.data.data(), values.data(), a.data.size());
  return a;
}

std::vector<float> RunIn(const ir::Model& model, const npy::Array& input, Precision precision) {
  return Values(testing::RunOurs(model, {input}, {.precision = precision}).at(0));
}

TEST(Fp16Compute, DotProductOverflowsMidwayLikeAHalfAccumulator) {
  // 256 products of +300 then 256 of -300: the sum is 0, but the running
  // half accumulator passes 65504 on the way.
  GraphBuilder b;
  const int x = b.Input("x", kF32, {1, 512});
  std::vector<float> w(512, 1.0f);
  b.Output(b.FullyConnected(x, b.ConstF32("w", {1, 512}, w), builder::kNoInput));
  const ir::Model model = b.Finish();
  std::vector<float> in(512, 300.0f);
  std::fill(in.begin() + 256, in.end(), -300.0f);
  EXPECT_EQ(RunIn(model, F32({1, 512}, in), Precision::kFp32)[0], 0.0f);
  EXPECT_EQ(RunIn(model, F32({1, 512}, in), Precision::kFp16Storage)[0], 0.0f);
  EXPECT_FALSE(std::isfinite(RunIn(model, F32({1, 512}, in), Precision::kFp16Compute)[0]));
}

TEST(Fp16Compute, LayerNormMeanOverflowsAt256ChannelsOf440) {
  // FACTS.md: channel sum 256 x 440 = 112640 > 65504.
  GraphBuilder b;
  const int x = b.Input("x", kF32, {1, 1, 256});
  b.Output(b.Mean(x, {-1}, true));
  const ir::Model model = b.Finish();
  const npy::Array in = F32({1, 1, 256}, std::vector<float>(256, 440.0f));
  EXPECT_EQ(RunIn(model, in, Precision::kFp32)[0], 440.0f);
  EXPECT_EQ(RunIn(model, in, Precision::kFp16Storage)[0], 440.0f);
  EXPECT_TRUE(std::isinf(RunIn(model, in, Precision::kFp16Compute)[0]));
}

TEST(Fp16Compute, LongSumsStallInHalfPrecision) {
  // 20000 ones in four half lanes: each lane stops at 2048, where the
  // spacing of binary16 becomes 2 and 2048 + 1 rounds back to 2048.
  GraphBuilder b;
  const int x = b.Input("x", kF32, {20000});
  b.Output(b.Sum(x, {0}, false));
  const ir::Model model = b.Finish();
  const npy::Array in = F32({20000}, std::vector<float>(20000, 1.0f));
  EXPECT_EQ(RunIn(model, in, Precision::kFp32)[0], 20000.0f);
  EXPECT_EQ(RunIn(model, in, Precision::kFp16Compute)[0], 8192.0f);
}

TEST(Fp16Compute, ConvAndSoftmaxStayCloseOnOrdinaryValues) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {1, 9, 9, 8});
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> w(16 * 3 * 3 * 8), bias(16), dw(3 * 3 * 16);
  for (float& v : w) v = u(rng);
  for (float& v : bias) v = u(rng);
  for (float& v : dw) v = u(rng);
  int y = b.Conv2D(x, b.ConstF32("w", {16, 3, 3, 8}, w), b.ConstF32("b", {16}, bias), tfl::Padding_SAME, 2, 2);
  y = b.DepthwiseConv2D(y, b.ConstF32("dw", {1, 3, 3, 16}, dw), builder::kNoInput, tfl::Padding_SAME, 1, 1);
  y = b.AveragePool2D(y, tfl::Padding_VALID, 2, 2, 2, 2);
  b.Output(b.Softmax(b.Reshape(y, {1, -1}), 1.0f));
  const ir::Model model = b.Finish();
  std::vector<float> in(9 * 9 * 8);
  for (float& v : in) v = u(rng);
  const npy::Array input = F32({1, 9, 9, 8}, in);
  const auto ref = testing::RunOurs(model, {input}, {.precision = Precision::kFp32});
  const auto half = testing::RunOurs(model, {input}, {.precision = Precision::kFp16Compute});
  const testing::Agreement a = testing::Compare(ref[0], half[0]);
  EXPECT_GT(a.correlation, 0.999);
  EXPECT_LT(a.max_abs_diff, 0.01);
  EXPECT_NE(ref[0].data, half[0].data);
}

}  // namespace
}  // namespace gpuclean
