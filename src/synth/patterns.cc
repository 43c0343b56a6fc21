// fp16 failure patterns (FACTS.md §2) at the magnitudes reported on phones,
// each with its fixed form. The inputs are part of the pattern: the same
// graph is harmless at |x| ~ 1. tests/synth bisects every broken graph in
// fp16-compute against fp32 and checks the first break, its cause and fix;
// every fixed form must stay at correlation >= 0.999.
#include <algorithm>
#include <cmath>

#include "gpuclean/builder.h"
#include "synth/graphs.h"

namespace gpuclean::synth::internal {
namespace {

using builder::GraphBuilder;

std::vector<float> Values(size_t n, float lo, float hi, uint32_t seed) {
  npy::Array a = HashUniform({static_cast<int64_t>(n)}, lo, hi, seed);
  return std::vector<float>(a.as<float>(), a.as<float>() + n);
}

// HashUniform with row r of R (every axis but the last flattened) scaled by
// 0.85 + 0.3 r / (R - 1): real rows (tokens, pixels) differ in magnitude,
// and per-row statistics (max, mean) need that spread to be comparable at all.
npy::Array RowVaried(std::vector<int64_t> shape, float lo, float hi, uint32_t seed) {
  npy::Array a = HashUniform(shape, lo, hi, seed);
  const int64_t width = shape.back(), rows = a.num_elements() / width;
  float* v = a.as<float>();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < width; ++c)
      v[r * width + c] *= 0.85f + 0.3f * static_cast<float>(r) / static_cast<float>(std::max<int64_t>(1, rows - 1));
  return a;
}

int Scalar(GraphBuilder& b, const std::string& name, float v) { return b.ConstF32(name, {}, {v}); }

// gamma * y + beta over the last axis: a real norm layer's affine part
// (a broken norm shows as "output = beta").
int Affine(GraphBuilder& b, int y, int channels) {
  int gamma = b.ConstF32("gamma", {channels}, Values(channels, 0.5f, 1.5f, 101));
  int beta = b.ConstF32("beta", {channels}, Values(channels, -0.5f, 0.5f, 102));
  return b.Add(b.Mul(y, gamma), beta);
}

// (x - mean) * rsqrt(var + eps) over `axes`, as converters emit a
// LayerNorm / InstanceNorm: MEAN, SUB, MUL(d, d), MEAN, ADD, RSQRT, MUL.
int Normalize(GraphBuilder& b, int x, const std::vector<int32_t>& axes, float eps) {
  const int mean = b.Mean(x, axes, true);
  const int d = b.Sub(x, mean);
  const int var = b.Mean(b.Mul(d, d), axes, true);
  return b.Mul(d, b.Rsqrt(b.Add(var, Scalar(b, "eps", eps))));
}

// S = max(1, amax/8) per row over the last axis.
int RowScale(GraphBuilder& b, int x) {
  const int amax = b.ReduceMax(b.Abs(x), {-1}, true);
  return b.Maximum(b.Mul(amax, Scalar(b, "one_eighth", 0.125f)), Scalar(b, "one", 1.0f));
}

// SafeLayerNorm v2: normalise x / S and stay in the scaled domain. The
// scale cancels in d / sqrt(var), so var * S^2 is never formed and every
// intermediate stays O(1) whatever |x| is.
int SafeLayerNormV2(GraphBuilder& b, int x, int channels) {
  const int xs = b.Div(x, RowScale(b, x));
  return Affine(b, Normalize(b, xs, {-1}, 1e-5f), channels);
}

ir::Model LayerNorm(const builder::Shape& shape, bool safe) {
  GraphBuilder b;
  const int channels = shape.back();
  const int x = b.Input("x", F32, shape);
  b.Output(safe ? SafeLayerNormV2(b, x, channels) : Affine(b, Normalize(b, x, {-1}, 1e-5f), channels));
  return b.Finish();
}

// The adaptive SafeLayerNorm v1 Parakeet first shipped: it scales x down for
// the sums but then rebuilds var * S * S, which at |x| ~ 7000 (S ~ 875) is
// ~1.6e7 - past half's 65504 - so rsqrt gives 0 and the output is beta.
ir::Model ParakeetFrontEnd(bool v2) {
  GraphBuilder b;
  const int channels = 176;
  const int x = b.Input("subsampled", F32, {1, 16, channels});
  if (v2) {
    b.Output(SafeLayerNormV2(b, x, channels));
    return b.Finish();
  }
  const int s = RowScale(b, x);
  const int xs = b.Div(x, s);
  const int m = b.Mean(xs, {-1}, true);
  const int d = b.Sub(xs, m);
  const int v = b.Mean(b.Mul(d, d), {-1}, true);
  const int var = b.Mul(b.Mul(v, s), s);  // var * S^2: the overflow
  const int mu = b.Mul(m, s);
  const int y = b.Mul(b.Sub(x, mu), b.Rsqrt(b.Add(var, Scalar(b, "eps", 1e-5f))));
  b.Output(Affine(b, y, channels));
  return b.Finish();
}

// RMSNorm: x * rsqrt(mean(x^2) + eps). x^2 at |x| > 256 is past 65504. The
// fix scales x by 1/64 before squaring; eps scales by 1/64^2, so the result
// is the same function.
ir::Model RmsNorm(bool scale_first) {
  GraphBuilder b;
  const int channels = 48;
  const int x = b.Input("x", F32, {1, 8, channels});
  int xs = x;
  float eps = 1e-6f;
  if (scale_first) {
    xs = b.Mul(x, Scalar(b, "inv64", 1.0f / 64));
    eps /= 64 * 64;
  }
  const int ms = b.Mean(b.Mul(xs, xs), {-1}, true);
  const int gamma = b.ConstF32("gamma", {channels}, Values(channels, 0.5f, 1.5f, 103));
  b.Output(b.Mul(b.Mul(xs, b.Rsqrt(b.Add(ms, Scalar(b, "eps", eps)))), gamma));
  return b.Finish();
}

// A global spatial MEAN over 256 x 256 in one op vs one axis at a time.
ir::Model SpatialMean(bool split) {
  GraphBuilder b;
  const int x = b.Input("x", F32, {1, 256, 256, 8});
  b.Output(split ? b.Mean(b.Mean(x, {2}, true), {1}, true) : b.Mean(x, {1, 2}, true));
  return b.Finish();
}

// A 3x3 conv whose outputs reach |x| ~ 5000, then InstanceNorm. The norm
// is scale-invariant, so dividing the conv's weights and bias by 1024 gives
// the same output while keeping the norm's squares inside half's range.
ir::Model ConvInstanceNorm(bool scaled) {
  GraphBuilder b;
  const int cin = 8, cout = 16;
  const float k = scaled ? 1.0f / 1024 : 1.0f;
  std::vector<float> w = Values(static_cast<size_t>(cout) * 9 * cin, -600.0f, 600.0f, 104);
  std::vector<float> bias = Values(cout, -50.0f, 50.0f, 105);
  for (float& v : w) v *= k;
  for (float& v : bias) v *= k;
  const int x = b.Input("x", F32, {1, 16, 16, cin});
  const int y =
      b.Conv2D(x, b.ConstF32("w", {cout, 3, 3, cin}, w), b.ConstF32("b", {cout}, bias), tfl::Padding_SAME, 1, 1);
  b.Output(Affine(b, Normalize(b, y, {1, 2}, 1e-3f), cout));
  return b.Finish();
}

// A residual stack h += 0.25 * tanh(FC(h - 24)). The stream sits at
// |h| ~ 24, where half's spacing is 1/64, while its informative part varies
// by ~0.3: every stored sum loses a little of it, and the loss compounds
// with depth (FACTS.md §2, deep attention at |x| 21-27) - no single op breaks.
ir::Model ResidualStack(int blocks) {
  GraphBuilder b;
  const int width = 64;
  int h = b.Input("x", F32, {1, 32, width});
  const int level = Scalar(b, "level", 24.0f);
  for (int i = 0; i < blocks; ++i) {
    const int w = b.ConstF32("w" + std::to_string(i), {width, width},
                             Values(static_cast<size_t>(width) * width, -0.3f, 0.3f, 200 + i));
    const int t = b.Tanh(b.FullyConnected(b.Sub(h, level), w, builder::kNoInput, builder::kNoActivation, true));
    h = b.Add(h, b.Mul(t, Scalar(b, "alpha" + std::to_string(i), 0.25f)));
  }
  b.Output(h);
  return b.Finish();
}

}  // namespace

// Depth of the residual stack, and how many of its blocks the hybrid split
// keeps on the GPU (the prefix that stays at correlation >= 0.999).
constexpr int kResidualBlocks = 24;
constexpr int kResidualGpuBlocks = 4;

std::vector<SynthGraph> PatternGraphs() {
  struct PatternPair {
    const char* name;
    const char* shows;
    const char* fixed_shows;
    ExpectedBreak expected;
    const char* input_doc;
    std::function<ir::Model()> bad, fixed;
    std::function<std::vector<npy::Array>()> inputs;
  };
  const std::vector<PatternPair> pairs = {
      {"layernorm-256",
       "LayerNorm over 256 channels at |x| ~ 440: the channel sum 112640 passes 65504",
       "SafeLayerNorm v2: per-row S = max(1, amax/8), normalise x/S, never rebuild var*S^2",
       {"MEAN", "overflow", "safe-layernorm-v2"},
       "x [1,8,256] uniform in [420, 460), seed 1, row r scaled by 0.85 + 0.3r/7",
       [] {
         return LayerNorm({1, 8, 256}, false);
       },
       [] {
         return LayerNorm({1, 8, 256}, true);
       },
       [] {
         return std::vector<npy::Array>{RowVaried({1, 8, 256}, 420, 460, 1)};
       }},
      {"nafnet-layernorm-512",
       "NAFNet-like channel LayerNorm on a [1,8,8,512] map at |x| ~ 175 (sum 89600)",
       "SafeLayerNorm v2 over the channels",
       {"MEAN", "overflow", "safe-layernorm-v2"},
       "x [1,8,8,512] uniform in [160, 190), seed 2, pixel r scaled by 0.85 + 0.3r/63",
       [] {
         return LayerNorm({1, 8, 8, 512}, false);
       },
       [] {
         return LayerNorm({1, 8, 8, 512}, true);
       },
       [] {
         return std::vector<npy::Array>{RowVaried({1, 8, 8, 512}, 160, 190, 2)};
       }},
      {"parakeet-frontend-7000",
       "Parakeet-like: the subsampling front end emits |x| ~ 7000; an adaptive SafeLayerNorm (v1) rebuilds var*S^2 ~ "
       "1.6e7",
       "SafeLayerNorm v2: stays in the scaled domain",
       {"MUL", "overflow", "safe-layernorm-v2"},
       "subsampled [1,16,176] uniform in [-7000, 7000), seed 3",
       [] { return ParakeetFrontEnd(false); },
       [] { return ParakeetFrontEnd(true); },
       [] {
         return std::vector<npy::Array>{HashUniform({1, 16, 176}, -7000, 7000, 3)};
       }},
      {"rmsnorm-274",
       "RMSNorm over 48 channels at |x| up to ~290: x*x passes 65504 (sum of squares ~1.3M)",
       "scale before square: x/64, eps/64^2 (the same function)",
       {"MUL", "overflow", "rmsnorm-scale-first"},
       "x [1,8,48] uniform in [-290, 290), seed 4",
       [] { return RmsNorm(false); },
       [] { return RmsNorm(true); },
       [] {
         return std::vector<npy::Array>{HashUniform({1, 8, 48}, -290, 290, 4)};
       }},
      {"mean-256x256",
       "one MEAN over 256x256 spatial: 65536 elements per output in a half accumulator",
       "two single-axis MEANs (axis 2, then axis 1)",
       {"MEAN", "reduction-extent", "mean-split-axes"},
       "x [1,256,256,8]: channel c uniform in [0.1c, 0.1c + 0.2), seed 5",
       [] { return SpatialMean(false); },
       [] { return SpatialMean(true); },
       [] {
         npy::Array a = HashUniform({1, 256, 256, 8}, 0, 0.2f, 5);
         float* v = a.as<float>();
         for (int64_t i = 0; i < a.num_elements(); ++i) v[i] += 0.1f * static_cast<float>(i % 8);
         return std::vector<npy::Array>{a};
       }},
      {"conv5000-instancenorm",
       "a 3x3 conv with outputs |x| ~ 5000, then InstanceNorm: its sums pass 65504",
       "the conv's weights and bias divided by 1024 (InstanceNorm is scale-invariant: same output)",
       {"MEAN", "large-activation-conv", "conv-weight-scale"},
       "x [1,16,16,8] uniform in [-1, 1), seed 6",
       [] { return ConvInstanceNorm(false); },
       [] { return ConvInstanceNorm(true); },
       [] {
         return std::vector<npy::Array>{HashUniform({1, 16, 16, 8}, -1, 1, 6)};
       }},
      {"residual-stack-24",
       "24 residual blocks h += 0.25*tanh(FC(h - 24)) at |h| ~ 24: fp16 error compounds with depth",
       "the first 4 blocks: the part a hybrid split keeps on the GPU (the rest runs on the CPU)",
       {"TANH", "precision-compounding", "split-graph"},
       "x [1,32,64] uniform in [23.5, 24.5), seed 7",
       [] { return ResidualStack(kResidualBlocks); },
       [] { return ResidualStack(kResidualGpuBlocks); },
       [] {
         return std::vector<npy::Array>{HashUniform({1, 32, 64}, 23.5f, 24.5f, 7)};
       }},
  };
  std::vector<SynthGraph> out;
  for (const PatternPair& p : pairs) {
    const std::string fixed_name = std::string(p.name) + ".fixed";
    out.push_back({.name = p.name,
                   .group = Group::kPattern,
                   .fixed = false,
                   .counterpart = fixed_name,
                   .shows = p.shows,
                   .expected = p.expected,
                   .input_doc = p.input_doc,
                   .build = p.bad,
                   .inputs = p.inputs});
    out.push_back({.name = fixed_name,
                   .group = Group::kPattern,
                   .fixed = true,
                   .counterpart = p.name,
                   .shows = p.fixed_shows,
                   .input_doc = p.input_doc,
                   .build = p.fixed,
                   .inputs = p.inputs});
  }
  return out;
}

}  // namespace gpuclean::synth::internal
