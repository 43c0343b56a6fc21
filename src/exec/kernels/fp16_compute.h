#pragma once
// The arithmetic of the `fp16-compute` numeric mode: a model of a mobile GPU
// that keeps accumulators in half precision. Every kernel that accumulates
// (dot products, reductions, softmax denominators, norms) calls these in that
// mode instead of its fp32 path, so overflow past 65504 and the precision
// loss of long half-precision sums appear where a half-precision GPU has them.
//
// The order of operations is part of the model (docs/numerics.md):
//  - dot products (CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV,
//    FULLY_CONNECTED, BATCH_MATMUL, the MediaPipe transposed conv): one
//    accumulator per output, starting at 0, fused multiply-add rounded to
//    binary16 after each step, in filter order (ky, kx, input channel); the
//    bias is added last, then the activation;
//  - reductions (MEAN, SUM, REDUCE_PROD, softmax/log-softmax denominators,
//    L2 norm, CUMSUM): four lanes, lane j takes elements
//    j, j+4, ... sequentially in binary16 (a vec4 accumulator), then the lanes
//    are combined as (l0 + l1) + (l2 + l3), each step rounded;
//  - MEAN multiplies the half sum by the half of 1/n;
//  - AVERAGE_POOL_2D keeps its float accumulator (GPU pooling shaders do).
// Inputs are already binary16 values (fp16 storage rounds every tensor), so a
// product of two of them is exact in float32. Where the CPU has AVX512-FP16
// the step is the binary16 FMA instruction; elsewhere the float sum is
// rounded to half, which differs only where that sum is exactly a half tie
// (docs/numerics.md).
#include <cstdint>

#include "exec/kernels/conv_util.h"

namespace gpuclean::exec::kernels::fp16 {

// Whether the op's sums run in half precision: in fp16-compute every
// accumulation does; in fp16-f32acc (ML Drift's use_f32_accum_for_fp16)
// reductions still do, but dot products do not (DotProductsInHalf).
inline bool Active(const KernelContext& ctx) {
  return ctx.precision == Precision::kFp16Compute || ctx.precision == Precision::kFp16F32Accum;
}
// Whether conv-like dot products (CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV,
// FULLY_CONNECTED, BATCH_MATMUL) accumulate in half.
inline bool DotProductsInHalf(const KernelContext& ctx) { return ctx.precision == Precision::kFp16Compute; }

// Round to the nearest binary16 value (ties to even), returned as float;
// beyond the half range it becomes ±inf, as a half register overflows.
float Round(float x);

// Round(v[i]) for every i < n, vectorised where the CPU allows.
void RoundInPlace(float* v, int64_t n);

// c[r * ldc + o] = clamp(Round(c[r * ldc + o] + bias[o])) for r < rows,
// o < n (bias may be null): the end of every dot product, over a whole
// output at once (per row it cost more than the products of small layers).
void FinishRows(float* c, int64_t rows, int n, int64_t ldc, const float* bias, conv::Clamp clamp);

// A 4-lane half-precision sum, in the order described above.
class LaneSum {
 public:
  void Add(float x) {
    lanes_[next_] = Round(lanes_[next_] + x);
    next_ = (next_ + 1) & 3;
  }
  float Total() const { return Round(Round(lanes_[0] + lanes_[1]) + Round(lanes_[2] + lanes_[3])); }

 private:
  float lanes_[4] = {0, 0, 0, 0};
  int next_ = 0;
};

// Product in the same lane order, for REDUCE_PROD.
class LaneProduct {
 public:
  void Add(float x) {
    lanes_[next_] = Round(lanes_[next_] * x);
    next_ = (next_ + 1) & 3;
  }
  float Total() const { return Round(Round(lanes_[0] * lanes_[1]) * Round(lanes_[2] * lanes_[3])); }

 private:
  float lanes_[4] = {1, 1, 1, 1};
  int next_ = 0;
};

// C[m, n] = clamp(round(sum_k A(m,k) B(n,k)) + bias[n]) with the dot product
// accumulated in half precision; parallel over rows.
void Gemm(ThreadPool& pool, int64_t m, int n, int k, conv::Strided a, conv::Strided b, const float* bias,
          conv::Clamp clamp, float* c, int64_t ldc);

// CONV_2D over the im2col geometry of conv::ConvGemm; weights [N][K] rows in
// (ky, kx, ic) order, n output channels written to c with row stride ldc.
void Conv(ThreadPool& pool, const float* input, const conv::ConvGeometry& g, const float* weights, int n,
          const float* bias, conv::Clamp clamp, float* c, int64_t ldc);

// Transposed convolution (conv::TransposeConv's geometry): each output is
// accumulated over its contributing (ky, kx, ic) taps.
void TransposeConv(ThreadPool& pool, const float* in, const float* weights, const float* bias,
                   const conv::TransposeConvGeometry& g, conv::Clamp clamp, float* out);

// Depthwise: acc[o] = sum over t < taps of x[t][o] * w[t][o], accumulated
// in half from 0 in tap order, each step rounded (for o < n).
using DepthwiseTapsFn = void (*)(const float* const* x, const float* const* w, int taps, int n, float* acc);
DepthwiseTapsFn DepthwiseTaps();
// The same for four pixels that share their taps' weights: x[p * taps + t],
// acc[p * n + o] (w[t] as above).
DepthwiseTapsFn DepthwiseTaps4();

// Whether the CPU runs the binary16 FMA instruction (AVX512-FP16) and the
// active instruction set allows it; the half-input entry points below need it.
bool NativeFma();
// Half values stored as float -> binary16 bits (exact for half values).
void ToHalfBits(const float* src, uint16_t* dst, int64_t n);
// DepthwiseTaps over binary16 inputs and weights: the tensors are converted
// once instead of once per tap that reads them. NativeFma() only.
void DepthwiseTapsHalf(const uint16_t* const* x, const uint16_t* const* w, int taps, int n, float* acc);
// Four pixels with the same weights: x[p * taps + t], acc[p * n + o].
void DepthwiseTapsHalf4(const uint16_t* const* x, const uint16_t* const* w, int taps, int n, float* acc);

}  // namespace gpuclean::exec::kernels::fp16
