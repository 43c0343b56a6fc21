// SOFTMAX over the last axis: exp((x - max) * beta) / sum, as LiteRT's float
// kernel (beta comes from the options; a model without options has beta 0).
//
// fp32 takes e^t from the branch-free polynomial LOGISTIC uses (within 2 ulp
// of std::exp) instead of a libm call per element, written in 16-lane vector
// values (fast_math.h) and cloned for AVX-512 and AVX2; on AVX-512 a row runs
// with masked tails and in-register reductions (SoftmaxRowAvx512), the same
// operations in the same order. The denominator is summed in sixteen lanes
// (within float rounding of LiteRT's element-order sum) and applied as one
// reciprocal. A libm call per element, the serial sum, and rows' tails and
// reductions through the stack were most of mha_parity's SOFTMAX time.
#include <cmath>
#include <cstring>

#include "exec/kernels/conv_util.h"
#include "exec/kernels/fp16_compute.h"
#include "exec/kernels/layout_util.h"

#if GPUCLEAN_CONV_X86
#include <immintrin.h>
#endif

// After the includes: only this file's functions.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options  // popped at the end: a unity batch goes on to other files
#pragma GCC optimize("no-trapping-math")
#define GPUCLEAN_SOFTMAX_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define GPUCLEAN_SOFTMAX_CLONES
#endif
#include "exec/kernels/fast_math.h"

namespace gpuclean::exec::kernels {
namespace {

void CheckSoftmax(const ir::Subgraph& graph, const ir::Op& op) {
  RequireInputCount(graph, op, 1, 1);
  RequireDtypes(graph, op, {tfl::TensorType_FLOAT32});
  const ir::Tensor* in = IrInput(graph, op, 0);
  if (in && in->rank() < 1) ThrowOpUnsupported(graph, op, "input must have rank >= 1, got a scalar");
}

using ew::Floats16;
typedef int32_t Mask16 __attribute__((vector_size(64)));

[[gnu::always_inline]] inline Floats16 Splat(float v) { return Floats16{} + v; }

[[gnu::always_inline]] inline Floats16 Load16(const float* p) {
  Floats16 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// e^t in 16 lanes as std::exp gives it, within 2 ulp: 0 below -87.3
// (std::exp's subnormal results there are below any softmax's resolution),
// NaN stays NaN, and, unless kNonPositive says t <= 0 (beta >= 0: every
// x - max is), infinity above 88.72. Written in vector values: GCC's
// vectoriser kept each 16-element block on the stack (a store-to-load round
// trip per block, and the overflow tests every softmax can skip).
template <bool kNonPositive>
[[gnu::always_inline]] inline Floats16 SoftmaxExp16(Floats16 t) {
  constexpr float kLo = -87.3f, kHi = 88.3f;
  const Mask16 under = t < kLo;
  Floats16 c = under ? Splat(kLo) : t;
  if constexpr (!kNonPositive) c = c > kHi ? Splat(kHi) : c;
  Floats16 e = ew::ExpClamped(c);
  e = under ? Floats16{} : e;
  if constexpr (!kNonPositive) e = t > 88.72f ? Splat(std::numeric_limits<float>::infinity()) : e;
  return t == t ? e : t;
}

// e^((v - max) * beta), the multiply skipped for a beta of 1 (exact, so the
// same bits). A function, not a lambda: a lambda is a function of its own,
// compiled for the baseline, and a 64-byte vector passed into it from a
// cloned caller is read from the wrong place.
template <bool kNonPositive, bool kUnitBeta>
[[gnu::always_inline]] inline Floats16 SoftmaxTerm16(Floats16 v, float max, float beta) {
  v = v - max;
  if constexpr (!kUnitBeta) v = v * beta;
  return SoftmaxExp16<kNonPositive>(v);
}

// One row in fp32: its max, the exponentials into y with their sum (one
// pass; the same order as summing y afterwards), the scaling. kUnitBeta
// skips the multiply by a beta of 1 (exact, so the same bits).
template <bool kNonPositive, bool kUnitBeta>
[[gnu::always_inline]] inline void SoftmaxRowAs(const float* __restrict x, float* __restrict y, int64_t depth,
                                                float beta) {
  // The max in 16 lanes: a loop-carried max is one compare latency per
  // element and does not vectorise; the max itself does not depend on order.
  Floats16 lanes = Splat(std::numeric_limits<float>::lowest());
  int64_t c = 0;
  for (; c + 16 <= depth; c += 16) {
    const Floats16 v = Load16(x + c);
    lanes = v > lanes ? v : lanes;
  }
  for (int j = 0; c < depth; ++c, ++j) lanes[j] = x[c] > lanes[j] ? x[c] : lanes[j];
  float max = lanes[0];
  for (int j = 1; j < 16; ++j) max = lanes[j] > max ? lanes[j] : max;
  // The exponentials in 16-wide blocks; the last partial block runs as a
  // whole block over a copy, so no element takes a scalar path. Their sum in
  // 16 lanes (element c into lane c % 16) added pairwise at the end: a fixed
  // order, so any thread count gives the same bits, at vector speed instead
  // of one add latency per element.
  Floats16 sums = {};
  for (c = 0; c + 16 <= depth; c += 16) {
    const Floats16 e = SoftmaxTerm16<kNonPositive, kUnitBeta>(Load16(x + c), max, beta);
    std::memcpy(y + c, &e, sizeof e);
    sums += e;
  }
  if (const int64_t rest = depth - c; rest > 0) {
    Floats16 block = Splat(max);
    std::memcpy(&block, x + c, rest * sizeof(float));
    const Floats16 e = SoftmaxTerm16<kNonPositive, kUnitBeta>(block, max, beta);
    for (int j = 0; j < rest; ++j) {
      y[c + j] = e[j];
      sums[j] += e[j];
    }
  }
  for (int width = 8; width >= 1; width /= 2)
    for (int j = 0; j < width; ++j) sums[j] += sums[j + width];
  // Times the reciprocal, as onnxruntime's MLAS does, not LiteRT's divide:
  // within 1 ulp of the quotient, and a vector divide per 16 elements was
  // half of mha_parity's SOFTMAX time.
  const float inverse = 1.0f / sums[0];
  for (c = 0; c < depth; ++c) y[c] = y[c] * inverse;
}

GPUCLEAN_SOFTMAX_CLONES void SoftmaxRowVector(const float* __restrict x, float* __restrict y, int64_t depth,
                                              float beta) {
  if (beta == 1.0f) return SoftmaxRowAs<true, true>(x, y, depth, beta);
  if (beta >= 0.0f) return SoftmaxRowAs<true, false>(x, y, depth, beta);
  SoftmaxRowAs<false, false>(x, y, depth, beta);
}

#if GPUCLEAN_CONV_X86
// SoftmaxRowAs with AVX-512's masks: the tail of a row (196 = 12 * 16 + 4 in
// mha_parity) loads, stores and sums under a mask, and the lanes reduce in
// registers, where the portable form went through the stack for both (a
// third of the row's time). The same operations in the same order, so the
// same bits; SOFTMAX.AllInstructionSetsGiveTheSameBits checks it.
// SoftmaxTerm16 in AVX-512 instructions, two fewer per 16 elements (mha_parity's
// SOFTMAX is bound by their count): the power of two goes on with vscalefps,
// which is the exponent-field add exactly wherever the result is a normal
// float (every t the clamps keep), and a t below kLo is not clamped before
// the polynomial, whose result there is discarded for the 0 it becomes.
template <bool kNonPositive, bool kUnitBeta>
__attribute__((always_inline, target("avx512f,avx512vl,avx512dq,avx2,fma"),
               optimize("O3", "fp-contract=fast"))) inline __m512
SoftmaxTermAvx512(__m512 v, float max, float beta) {
  constexpr float kLo = -87.3f, kHi = 88.3f, kRound = 12582912.0f;
  __m512 t = _mm512_sub_ps(v, _mm512_set1_ps(max));
  if constexpr (!kUnitBeta) t = _mm512_mul_ps(t, _mm512_set1_ps(beta));
  const __mmask16 under = _mm512_cmp_ps_mask(t, _mm512_set1_ps(kLo), _CMP_LT_OQ);
  __m512 c = t;
  if constexpr (!kNonPositive) c = _mm512_min_ps(c, _mm512_set1_ps(kHi));
  const __m512 rounded = _mm512_fmadd_ps(c, _mm512_set1_ps(1.44269504088896341f), _mm512_set1_ps(kRound));
  const __m512 fn = _mm512_sub_ps(rounded, _mm512_set1_ps(kRound));
  const __m512 r =
      _mm512_fnmadd_ps(fn, _mm512_set1_ps(-2.12194440e-4f), _mm512_fnmadd_ps(fn, _mm512_set1_ps(0.693359375f), c));
  __m512 p = _mm512_fmadd_ps(r, _mm512_set1_ps(1.9875691500e-4f), _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  const __m512 y = _mm512_add_ps(_mm512_fmadd_ps(_mm512_mul_ps(p, r), r, r), _mm512_set1_ps(1.0f));
  __m512 e = _mm512_maskz_mov_ps(static_cast<__mmask16>(~under), _mm512_scalef_ps(y, fn));
  if constexpr (!kNonPositive)
    e = _mm512_mask_mov_ps(e, _mm512_cmp_ps_mask(t, _mm512_set1_ps(88.72f), _CMP_GT_OQ),
                           _mm512_set1_ps(std::numeric_limits<float>::infinity()));
  return _mm512_mask_mov_ps(e, _mm512_cmp_ps_mask(t, t, _CMP_UNORD_Q), t);
}

template <bool kNonPositive, bool kUnitBeta>
GPUCLEAN_TARGET_AVX512 void SoftmaxRowAvx512(const float* __restrict x, float* __restrict y, int64_t depth,
                                             float beta) {
  const int64_t whole = depth / 16 * 16;
  const __mmask16 tail = static_cast<__mmask16>((1u << (depth - whole)) - 1);
  __m512 lanes = _mm512_set1_ps(std::numeric_limits<float>::lowest());
  for (int64_t c = 0; c < whole; c += 16) lanes = _mm512_max_ps(_mm512_loadu_ps(x + c), lanes);
  lanes = _mm512_max_ps(_mm512_mask_loadu_ps(lanes, tail, x + whole), lanes);
  const float max = _mm512_reduce_max_ps(lanes);
  __m512 sums = _mm512_setzero_ps();
  for (int64_t c = 0; c < whole; c += 16) {
    const __m512 e = SoftmaxTermAvx512<kNonPositive, kUnitBeta>(_mm512_loadu_ps(x + c), max, beta);
    _mm512_storeu_ps(y + c, e);
    sums = sums + e;
  }
  if (tail) {
    const __m512 e = SoftmaxTermAvx512<kNonPositive, kUnitBeta>(
        _mm512_mask_loadu_ps(_mm512_set1_ps(max), tail, x + whole), max, beta);
    _mm512_mask_storeu_ps(y + whole, tail, e);
    sums = _mm512_mask_add_ps(sums, tail, sums, e);
  }
  // Lane j + 8, then + 4, + 2, + 1: the portable form's pairwise order.
  const __m512 inverse = _mm512_set1_ps(1.0f / _mm512_reduce_add_ps(sums));
  for (int64_t c = 0; c < whole; c += 16) _mm512_storeu_ps(y + c, _mm512_loadu_ps(y + c) * inverse);
  if (tail) _mm512_mask_storeu_ps(y + whole, tail, _mm512_maskz_loadu_ps(tail, y + whole) * inverse);
}
#endif

using SoftmaxRowFn = void (*)(const float* __restrict, float* __restrict, int64_t, float);

// The row function for this CPU and beta, chosen once per op.
SoftmaxRowFn PickSoftmaxRow(float beta) {
#if GPUCLEAN_CONV_X86
  if (conv::ActiveIsa() == conv::Isa::kAvx512) {
    if (beta == 1.0f) return SoftmaxRowAvx512<true, true>;
    if (beta >= 0.0f) return SoftmaxRowAvx512<true, false>;
    return SoftmaxRowAvx512<false, false>;
  }
#endif
  return SoftmaxRowVector;
}

void EvalSoftmax(KernelContext& ctx) {
  const Tensor& input = ctx.input(0);
  Tensor& output = ctx.output(0);
  const float beta = OptionsOr<tfl::SoftmaxOptionsT>(ctx.op).beta;
  const int64_t depth = input.rank() == 0 ? 1 : input.dim(-1);
  if (depth == 0) return;
  const int64_t rows = input.num_elements() / depth;
  const float* in = input.as<const float>();
  float* out = output.as<float>();
  const SoftmaxRowFn softmax_row = PickSoftmaxRow(beta);
  ForEachRow(ctx.pool, rows, depth, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const float* x = in + r * depth;
      float* y = out + r * depth;
      if (!fp16::Active(ctx)) {
        softmax_row(x, y, depth, beta);
        continue;
      }
      float max = std::numeric_limits<float>::lowest();
      for (int64_t c = 0; c < depth; ++c) max = std::max(max, x[c]);
      fp16::LaneSum half;
      for (int64_t c = 0; c < depth; ++c) {
        y[c] = fp16::Round(std::exp((x[c] - max) * beta));
        half.Add(y[c]);
      }
      const float total = half.Total();
      for (int64_t c = 0; c < depth; ++c) y[c] = fp16::Round(y[c] / total);
    }
  });
}

}  // namespace

Kernel SoftmaxKernel() { return {CheckSoftmax, EvalSoftmax}; }

}  // namespace gpuclean::exec::kernels

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif
