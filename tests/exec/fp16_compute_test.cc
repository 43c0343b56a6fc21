// The fp16-compute numeric mode: binary16 rounding, and the failure
// signatures it must reproduce on the host (docs/numerics.md): an
// accumulator passing 65504 becomes inf even when the result would fit, and a
// long half-precision sum stalls once its spacing exceeds the addends.
#include <gtest/gtest.h>

#include <fp16.h>

#include <cmath>
#include <cstring>
#include <random>

#include "exec/kernels/conv_util.h"
#include "exec/kernels/fp16_compute.h"
#include "gpuclean/builder.h"
#include "support/arrays.h"
#include "support/conformance.h"
#include "support/test_support.h"
#include "support/tflite_names.h"

namespace gpuclean {
namespace {

using builder::GraphBuilder;
using exec::Precision;
namespace conv = exec::kernels::conv;
using ::gpuclean::testing::tflite_names::kF32;

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
  EXPECT_EQ(RunIn(model, testing::F32({1, 512}, in), Precision::kFp32)[0], 0.0f);
  EXPECT_EQ(RunIn(model, testing::F32({1, 512}, in), Precision::kFp16Storage)[0], 0.0f);
  EXPECT_FALSE(std::isfinite(RunIn(model, testing::F32({1, 512}, in), Precision::kFp16Compute)[0]));
}

TEST(Fp16Compute, LayerNormMeanOverflowsAt256ChannelsOf440) {
  // FACTS.md: channel sum 256 x 440 = 112640 > 65504.
  GraphBuilder b;
  const int x = b.Input("x", kF32, {1, 1, 256});
  b.Output(b.Mean(x, {-1}, true));
  const ir::Model model = b.Finish();
  const npy::Array in = testing::F32({1, 1, 256}, std::vector<float>(256, 440.0f));
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
  const npy::Array in = testing::F32({20000}, std::vector<float>(20000, 1.0f));
  EXPECT_EQ(RunIn(model, in, Precision::kFp32)[0], 20000.0f);
  EXPECT_EQ(RunIn(model, in, Precision::kFp16Compute)[0], 8192.0f);
}

// fp16-f32acc, ML Drift's use_f32_accum_for_fp16 (delegate_options.h:321 @
// v2.2.0): tensors and arithmetic stay half, conv-like dot products
// accumulate in float, reductions still in half.
TEST(Fp16Compute, F32AccumKeepsDotProductsInFloatAndReductionsInHalf) {
  GraphBuilder fc;
  const int x = fc.Input("x", kF32, {1, 512});
  fc.Output(fc.FullyConnected(x, fc.ConstF32("w", {1, 512}, std::vector<float>(512, 1.0f)), builder::kNoInput));
  const ir::Model dot = fc.Finish();
  std::vector<float> in(512, 300.0f);
  std::fill(in.begin() + 256, in.end(), -300.0f);
  EXPECT_EQ(RunIn(dot, testing::F32({1, 512}, in), Precision::kFp16F32Accum)[0], 0.0f);

  GraphBuilder sum;
  sum.Output(sum.Sum(sum.Input("x", kF32, {20000}), {0}, false));
  const npy::Array ones = testing::F32({20000}, std::vector<float>(20000, 1.0f));
  EXPECT_EQ(RunIn(sum.Finish(), ones, Precision::kFp16F32Accum)[0], 8192.0f);

  // Storage is still half: the output is rounded to binary16.
  GraphBuilder fine;
  const int y = fine.Input("x", kF32, {1, 3});
  fine.Output(fine.FullyConnected(y, fine.ConstF32("w", {1, 3}, {1.0f, 1.0f, 1.0f}), builder::kNoInput));
  const ir::Model small = fine.Finish();
  const npy::Array values = testing::F32({1, 3}, {1000.0f, 0.25f, 0.125f});
  EXPECT_EQ(RunIn(small, values, Precision::kFp16F32Accum)[0], ReferenceRound(1000.375f));  // 1000.5
  // A half accumulator loses both small addends (1000.25 ties to 1000).
  EXPECT_EQ(RunIn(small, values, Precision::kFp16Compute)[0], 1000.0f);
  EXPECT_EQ(exec::ParsePrecision("fp16-f32acc"), Precision::kFp16F32Accum);
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
  const npy::Array input = testing::F32({1, 9, 9, 8}, in);
  const auto ref = testing::RunOurs(model, {input}, {.precision = Precision::kFp32});
  const auto half = testing::RunOurs(model, {input}, {.precision = Precision::kFp16Compute});
  const testing::Agreement a = testing::Compare(ref[0], half[0]);
  EXPECT_GT(a.correlation, 0.999);
  EXPECT_LT(a.max_abs_diff, 0.01);
  EXPECT_NE(ref[0].data, half[0].data);
}

// MEAN/SUM over outer axes with the channels kept (a spatial mean over NHWC)
// take a vectorised path; it must be the documented 4-lane order exactly.
TEST(Fp16Compute, SpatialMeanFollowsTheLaneOrder) {
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> u(-1, 1);
  const int n = 2, h = 5, w = 7, c = 13;
  std::vector<float> x(n * h * w * c);
  for (float& v : x) v = ReferenceRound(u(rng) * 900);
  for (bool mean : {true, false}) {
    GraphBuilder b;
    const int in = b.Input("x", kF32, {n, h, w, c});
    b.Output(mean ? b.Mean(in, {1, 2}, true) : b.Sum(in, {1, 2}, false));
    const std::vector<float> got = RunIn(b.Finish(), testing::F32({n, h, w, c}, x), Precision::kFp16Compute);
    ASSERT_EQ(got.size(), static_cast<size_t>(n * c));
    const float inverse = exec::kernels::fp16::Round(1.0f / (h * w));
    for (int bi = 0; bi < n; ++bi)
      for (int ch = 0; ch < c; ++ch) {
        exec::kernels::fp16::LaneSum sum;
        for (int i = 0; i < h * w; ++i) sum.Add(x[(bi * h * w + i) * c + ch]);
        const float want = mean ? exec::kernels::fp16::Round(sum.Total() * inverse) : sum.Total();
        EXPECT_EQ(got[bi * c + ch], want) << (mean ? "MEAN " : "SUM ") << bi << "," << ch;
      }
  }
}

// A NaN input stays NaN through a clamped (RELU6) convolution on every path,
// as in fp32: the vector clamp must not turn it into a bound.
TEST(Fp16Compute, NanSurvivesTheActivationClampOnEveryPath) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {1, 3, 3, 4});
  b.Output(b.Conv2D(x, b.ConstF32("w", {9, 1, 1, 4}, std::vector<float>(36, 0.5f)), builder::kNoInput,
                    tfl::Padding_VALID, 1, 1, tfl::ActivationFunctionType_RELU6));
  const ir::Model model = b.Finish();
  std::vector<float> in(36, 1.0f);
  in[4] = NAN;  // pixel 1
  const conv::Isa saved = conv::ActiveIsa();
  for (conv::Isa isa : {conv::Isa::kGeneric, conv::Isa::kAvx2, conv::Isa::kAvx512}) {
    if (isa > conv::DetectedIsa()) continue;
    SCOPED_TRACE(conv::IsaName(conv::SetIsaForTesting(isa)));
    const std::vector<float> out = RunIn(model, testing::F32({1, 3, 3, 4}, in), Precision::kFp16Compute);
    for (int o = 0; o < 9; ++o) {
      EXPECT_TRUE(std::isnan(out[9 + o])) << "pixel 1, channel " << o;
      EXPECT_EQ(out[o], 2.0f) << "pixel 0, channel " << o;  // 4 x 0.5, within RELU6
    }
  }
  conv::SetIsaForTesting(saved);
}

// TRANSPOSE_CONV in fp16-compute: every output accumulates the taps that
// land on an input sample, in (ky, kx, ic) filter order, each step rounded
// (the kernel runs one stride phase at a time; this is the plain loop). On
// the scalar path, whose rounding the loop reproduces bit for bit.
TEST(Fp16Compute, TransposedConvAccumulatesItsTapsInFilterOrder) {
  const conv::Isa saved = conv::ActiveIsa();
  conv::SetIsaForTesting(conv::Isa::kGeneric);
  std::mt19937 rng(4);
  std::uniform_real_distribution<float> u(-1, 1);
  for (const auto& [stride, kernel] : std::vector<std::pair<int, int>>{{2, 3}, {2, 4}, {3, 2}, {1, 3}}) {
    SCOPED_TRACE("stride " + std::to_string(stride) + " kernel " + std::to_string(kernel));
    const int h = 4, w = 3, ic = 6, oc = 5;
    const int oh = (h - 1) * stride + kernel, ow = (w - 1) * stride + kernel;
    std::vector<float> x(h * w * ic), wt(oc * kernel * kernel * ic);
    for (float& v : x) v = ReferenceRound(u(rng) * 300);
    for (float& v : wt) v = ReferenceRound(u(rng) * 20);
    GraphBuilder b;
    const int in = b.Input("x", kF32, {1, h, w, ic});
    b.Output(b.TransposeConv(in, b.ConstF32("w", {oc, kernel, kernel, ic}, wt), builder::kNoInput, {1, oh, ow, oc},
                             tfl::Padding_VALID, stride, stride));
    const std::vector<float> got = RunIn(b.Finish(), testing::F32({1, h, w, ic}, x), Precision::kFp16Compute);
    ASSERT_EQ(got.size(), static_cast<size_t>(oh * ow * oc));
    for (int oy = 0; oy < oh; ++oy)
      for (int ox = 0; ox < ow; ++ox)
        for (int o = 0; o < oc; ++o) {
          float acc = 0;
          for (int ky = 0; ky < kernel; ++ky)
            for (int kx = 0; kx < kernel; ++kx) {
              if ((oy - ky) % stride != 0 || (ox - kx) % stride != 0 || oy < ky || ox < kx) continue;
              const int iy = (oy - ky) / stride, ix = (ox - kx) / stride;
              if (iy >= h || ix >= w) continue;
              for (int c = 0; c < ic; ++c)
                acc = ReferenceRound(acc + x[(iy * w + ix) * ic + c] * wt[((o * kernel + ky) * kernel + kx) * ic + c]);
            }
          ASSERT_EQ(got[(oy * ow + ox) * oc + o], ReferenceRound(acc)) << oy << "," << ox << "," << o;
        }
  }
  conv::SetIsaForTesting(saved);
}

// The instruction-set paths of fp16-compute: scalar and F16C round the float
// sum acc + a*b to half and must give the same bits; the binary16 FMA
// instruction of AVX512-FP16 (where the CPU has it) rounds once, which
// differs where the float sum lands exactly on a half tie (docs/numerics.md):
// rarely, and by about one half ulp of the accumulator. Magnitudes make sums reach
// the thousands (every step's rounding matters) and some pass 65504 (inf).
TEST(Fp16Compute, InstructionSetPathsAgree) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1, 1);
  auto values = [&](size_t n, float scale) {
    std::vector<float> v(n);
    for (float& x : v) x = ReferenceRound(u(rng) * scale);
    return v;
  };
  GraphBuilder b;
  const int x = b.Input("x", kF32, {1, 10, 9, 40});
  int y = b.Conv2D(x, b.ConstF32("w", {37, 3, 3, 40}, values(37 * 9 * 40, 4)), b.ConstF32("b", {37}, values(37, 8)),
                   tfl::Padding_SAME, 1, 1, tfl::ActivationFunctionType_RELU6);
  const int wide =
      b.Conv2D(x, b.ConstF32("w1", {70, 1, 1, 40}, values(70 * 40, 400)), builder::kNoInput, tfl::Padding_VALID, 1, 1);
  const int dw = b.DepthwiseConv2D(x, b.ConstF32("dw", {1, 3, 3, 40}, values(9 * 40, 2)),
                                   b.ConstF32("db", {40}, values(40, 1)), tfl::Padding_SAME, 2, 2);
  const int up = b.TransposeConv(y, b.ConstF32("tw", {5, 3, 3, 37}, values(5 * 9 * 37, 1)), builder::kNoInput,
                                 {1, 20, 18, 5}, tfl::Padding_SAME, 2, 2);
  const int fc =
      b.FullyConnected(b.Reshape(x, {90, 40}), b.ConstF32("fw", {33, 40}, values(33 * 40, 30)), builder::kNoInput);
  // Stride 1: interior pixels run four at a time on the FMA path.
  const int dw1 = b.DepthwiseConv2D(x, b.ConstF32("dw1", {1, 3, 3, 40}, values(9 * 40, 3)), builder::kNoInput,
                                    tfl::Padding_SAME, 1, 1);
  b.Output(y);
  b.Output(wide);
  b.Output(dw);
  b.Output(up);
  b.Output(fc);
  b.Output(dw1);
  const ir::Model model = b.Finish();
  const npy::Array input = testing::F32({1, 10, 9, 40}, values(10 * 9 * 40, 40));

  const conv::Isa saved = conv::ActiveIsa();
  auto run = [&](conv::Isa isa) {
    conv::SetIsaForTesting(isa);
    return testing::RunOurs(model, {input}, {.precision = Precision::kFp16Compute});
  };
  const std::vector<npy::Array> generic = run(conv::Isa::kGeneric);
  int infinities = 0;
  for (const npy::Array& out : generic)
    for (int64_t i = 0; i < out.num_elements(); ++i) infinities += std::isinf(out.as<float>()[i]);
  EXPECT_GT(infinities, 0) << "the wide convolution should overflow somewhere";
  if (conv::DetectedIsa() >= conv::Isa::kAvx2) {
    const std::vector<npy::Array> f16c = run(conv::Isa::kAvx2);
    for (size_t o = 0; o < generic.size(); ++o) EXPECT_EQ(f16c[o].data, generic[o].data) << "F16C, output " << o;
  }
  if (conv::DetectedIsa() >= conv::Isa::kAvx512) {
    const std::vector<npy::Array> best = run(conv::Isa::kAvx512);
    for (size_t o = 0; o < generic.size(); ++o) {
      // Each output is one op on the graph input: a tie resolved the other
      // way moves an accumulator by one half ulp, and later steps can carry
      // that a little further; two ulps of the largest value bound it.
      float largest = 0;
      for (int64_t i = 0; i < generic[o].num_elements(); ++i)
        if (std::isfinite(generic[o].as<float>()[i])) largest = std::max(largest, std::fabs(generic[o].as<float>()[i]));
      int64_t differing = 0;
      for (int64_t i = 0; i < generic[o].num_elements(); ++i) {
        const float g = generic[o].as<float>()[i], n = best[o].as<float>()[i];
        if (std::memcmp(&g, &n, 4) == 0) continue;
        ++differing;
        if (std::isfinite(g) && std::isfinite(n))
          EXPECT_LE(std::fabs(g - n), std::ldexp(largest, -9)) << "output " << o << " element " << i;
      }
      EXPECT_LE(differing, generic[o].num_elements() / 100) << "output " << o;
    }
  }
  conv::SetIsaForTesting(saved);
}

}  // namespace
}  // namespace gpuclean
