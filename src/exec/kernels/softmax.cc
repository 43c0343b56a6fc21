// SOFTMAX over the last axis: exp((x - max) * beta) / sum, as LiteRT's float
// kernel (beta comes from the options; a model without options has beta 0).
//
// fp32 takes e^t from the branch-free polynomial LOGISTIC uses (within 2 ulp
// of std::exp) instead of a libm call per element, in loops GCC vectorises
// without trapping math, cloned for AVX-512 and AVX2 (logistic.cc says why);
// the denominator is summed in sixteen lanes (within float rounding of
// LiteRT's element-order sum) and applied as one reciprocal. A libm call per element and the serial sum
// were most of mha_parity's SOFTMAX time.
#include <cmath>
#include <cstring>

#include "exec/kernels/fp16_compute.h"
#include "exec/kernels/layout_util.h"

// After the includes: only this file's functions.
#if defined(__GNUC__) && !defined(__clang__)
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

// e^t as std::exp gives it, within 2 ulp: 0 below -87.3 (std::exp's
// subnormal results there are below any softmax's resolution), infinity above
// 88.7, NaN stays NaN.
inline float SoftmaxExp(float t) {
  constexpr float kLo = -87.3f, kHi = 88.3f;
  const bool under = t<kLo, over = t> 88.72f;
  float c = under ? kLo : t;
  c = c > kHi ? kHi : c;
  float e = ew::ExpClamped(c);
  e = under ? 0.0f : e;
  e = over ? std::numeric_limits<float>::infinity() : e;
  return t == t ? e : t;
}

// Sixteen floats as one value: GCC kept 16-element arrays of running maxima
// and sums on the stack, a store-to-load round trip per block (rows of 196,
// mha_parity: 0.127 -> 0.085 ms over its 784 rows).
typedef float Lanes16 __attribute__((vector_size(64)));

// One row in fp32: its max, the exponentials into y with their sum (one
// pass; the same order as summing y afterwards), the scaling.
GPUCLEAN_SOFTMAX_CLONES void SoftmaxRow(const float* __restrict x, float* __restrict y, int64_t depth, float beta) {
  // The max in 16 lanes: a loop-carried max is one compare latency per
  // element and does not vectorise; the max itself does not depend on order.
  Lanes16 lanes;
  for (int j = 0; j < 16; ++j) lanes[j] = std::numeric_limits<float>::lowest();
  int64_t c = 0;
  for (; c + 16 <= depth; c += 16) {
    Lanes16 v;
    std::memcpy(&v, x + c, sizeof v);
    lanes = v > lanes ? v : lanes;
  }
  for (int j = 0; c < depth; ++c, ++j) lanes[j] = x[c] > lanes[j] ? x[c] : lanes[j];
  float max = lanes[0];
  for (int j = 1; j < 16; ++j) max = lanes[j] > max ? lanes[j] : max;
  // The exponentials in 16-wide blocks; the last partial block runs as a
  // whole block over a copy, so no element takes the long scalar path. Their
  // sum in 16 lanes (element c into lane c % 16) added pairwise at the end:
  // a fixed order, so any thread count gives the same bits, at vector speed
  // instead of one add latency per element.
  Lanes16 sums = {};
  for (c = 0; c + 16 <= depth; c += 16) {
    float e[16];
    for (int j = 0; j < 16; ++j) {
      e[j] = SoftmaxExp((x[c + j] - max) * beta);
      y[c + j] = e[j];
    }
    Lanes16 v;
    std::memcpy(&v, e, sizeof v);
    sums += v;
  }
  if (const int64_t rest = depth - c; rest > 0) {
    float block[16];
    for (int j = 0; j < 16; ++j) block[j] = j < rest ? x[c + j] : max;
    for (int j = 0; j < 16; ++j) block[j] = SoftmaxExp((block[j] - max) * beta);
    for (int j = 0; j < rest; ++j) {
      y[c + j] = block[j];
      sums[j] += block[j];
    }
  }
  float lane[16];
  std::memcpy(lane, &sums, sizeof lane);
  for (int width = 8; width >= 1; width /= 2)
    for (int j = 0; j < width; ++j) lane[j] += lane[j + width];
  const float sum = lane[0];
  // Times the reciprocal, as onnxruntime's MLAS does, not LiteRT's divide:
  // within 1 ulp of the quotient, and a vector divide per 16 elements was
  // half of mha_parity's SOFTMAX time.
  const float inverse = 1.0f / sum;
  for (c = 0; c < depth; ++c) y[c] = y[c] * inverse;
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
  ForEachRow(ctx.pool, rows, depth, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const float* x = in + r * depth;
      float* y = out + r * depth;
      if (!fp16::Active(ctx)) {
        SoftmaxRow(x, y, depth, beta);
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
