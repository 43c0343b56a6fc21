// A LayerNorm's seven ops (exec/layer_norm_pattern.h) in one pass per row,
// run at the normalizing MUL when the interpreter skips the other six
// (FuseLayerNorms): input(0) is x, input(1) the epsilon. The same fp32
// operations in the same order as the ops, so the same bits: each MEAN's sum
// in ContiguousLaneSum's eight lanes (reduce_util.cc) plus the reduction's
// initial 0, divided by the count; d = x - mu; the square rounded before it
// is summed; 1 / sqrt(v + eps); d * r, then the MUL's clamp. Without it a
// transformer's LayerNorm wrote and read back five row-sized tensors.
#include <cmath>
#include <cstring>

#include "exec/kernels/common.h"
#include "exec/kernels/layout_util.h"

// A multiply-add contracted into an FMA would skip the square's rounding.
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")
#endif

namespace gpuclean::exec::kernels {
namespace {

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define GPUCLEAN_LAYER_NORM_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define GPUCLEAN_LAYER_NORM_CLONES
#endif

typedef float Floats8 __attribute__((vector_size(32)));
typedef int32_t Ints8 __attribute__((vector_size(32)));

// (v - mu)^2, or v. A function, not a lambda: a lambda is compiled for the
// baseline, and a vector passed into it from a cloned caller is read from
// the wrong place.
template <bool kSquaredDeviation>
[[gnu::always_inline]] inline Floats8 LaneTerm(Floats8 v, float mu) {
  if constexpr (kSquaredDeviation) {
    v = v - mu;
    v = v * v;
  }
  return v;
}

// Eight lanes, element i into lane i % 8, folded pairwise: ContiguousLaneSum's
// order, of x[i] (kSquaredDeviation false) or of (x[i] - mu)^2, as vector
// values. The row's last partial block adds +0 in its unused lanes, which
// changes no lane: a lane starts at +0 and never holds -0.
template <bool kSquaredDeviation>
[[gnu::always_inline]] inline float LaneSumOfRow(const float* __restrict x, int64_t n, float mu) {
  Floats8 lanes = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    Floats8 v;
    std::memcpy(&v, x + i, sizeof v);
    lanes += LaneTerm<kSquaredDeviation>(v, mu);
  }
  if (const int64_t rest = n - i; rest > 0) {
    Floats8 v = {};
    std::memcpy(&v, x + i, rest * sizeof(float));
    const Ints8 lane_index = {0, 1, 2, 3, 4, 5, 6, 7};
    lanes += lane_index < static_cast<int32_t>(rest) ? LaneTerm<kSquaredDeviation>(v, mu) : Floats8{};
  }
  return ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
}

// `start`: the MEAN's initial sum, 0.0f, added to the row's; -0.0f where
// the tensor is one row, which the reduction returns as it is (0 + -0
// would be +0).
GPUCLEAN_LAYER_NORM_CLONES void LayerNormRow(const float* __restrict x, float* __restrict y, int64_t n, float start,
                                             float epsilon, float lo, float hi) {
  const float count = static_cast<float>(n);
  const float mu = (start + LaneSumOfRow<false>(x, n, 0.0f)) / count;
  const float variance = (start + LaneSumOfRow<true>(x, n, mu)) / count;
  const float r = 1.0f / std::sqrt(variance + epsilon);
  for (int64_t i = 0; i < n; ++i) {
    const float v = (x[i] - mu) * r;
    const float m = v < lo ? lo : v;
    y[i] = hi < m ? hi : m;
  }
}

void EvalFusedLayerNorm(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  const int64_t n = x.rank() == 0 ? 1 : x.dim(-1);
  if (y.num_elements() != x.num_elements() || ctx.input(1).num_elements() != 1 || n <= 0)
    ThrowInternal(
        fmt::format("{}: a fused LayerNorm of {} elements into {}", OpLabel(ctx), x.num_elements(), y.num_elements()));
  const float epsilon = ctx.input(1).as<float>()[0];
  const auto* o = ctx.op.options.AsMulOptions();
  const Range<float> clamp =
      ActivationRange<float>(o ? o->fused_activation_function : tfl::ActivationFunctionType_NONE);
  const float* in = x.as<float>();
  float* out = y.as<float>();
  const int64_t rows = x.num_elements() / n;
  const float start = rows > 1 ? 0.0f : -0.0f;
  ForEachRow(ctx.pool, rows, n, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row)
      LayerNormRow(in + row * n, out + row * n, n, start, epsilon, clamp.lo, clamp.hi);
  });
}

}  // namespace

Kernel FusedLayerNormKernel() { return {nullptr, EvalFusedLayerNorm}; }

}  // namespace gpuclean::exec::kernels

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif
