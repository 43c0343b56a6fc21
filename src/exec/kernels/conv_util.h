#pragma once
// Shared machinery of the conv family (CONV_2D, DEPTHWISE_CONV_2D,
// TRANSPOSE_CONV, FULLY_CONNECTED, BATCH_MATMUL, pooling, resizing and the
// MediaPipe custom ops): LiteRT's padding and activation-range rules, the
// SIMD dispatch, and the single-precision GEMM every matrix-shaped op uses.
//
// The GEMM is our own: a packed, register-blocked kernel written once with
// GCC vector extensions and compiled for AVX-512, AVX2+FMA and plain SSE2,
// chosen at run time from what the CPU supports. OpenBLAS was measured and
// not used: the Debian build (0.3.21, DYNAMIC_ARCH) does not recognise recent
// Xeons and falls back to its SSE3 "Prescott" kernels (16-28 GFLOP/s on the
// dev box, where the same library forced to SkylakeX reaches ~150, and this
// kernel 90-95% of that); forcing the core needs an environment variable set
// before the process starts. Numbers in conv_gemm.cc.
//
// Where Debian's oneDNN is built in (onednn.cc), the fp32 CONV_2D,
// DEPTHWISE_CONV_2D, FULLY_CONNECTED and large BATCH_MATMUL run there
// instead: its JIT kernels keep the weights in a blocked layout and reach
// 185-215 GFLOP/s single-threaded on ResNet/ConvNeXt layer shapes in place
// of ~60 for this GEMM fed from NHWC tensors. This GEMM remains for the
// rest: the fp16 numeric modes (their own dot products), runtime weights,
// cases oneDNN refuses, and builds without it.
//
// Threads: everything heavy goes through the interpreter's ThreadPool
// (ctx.pool), or oneDNN's OpenMP team of the same size; results do not
// depend on the thread count (tested).
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "exec/kernel.h"
#include "exec/kernels/common.h"

// Hot loops keep their optimisation in Debug builds too (the tests run Debug
// builds against LiteRT.js), and may contract a*b+c into an FMA.
#if defined(__GNUC__) && !defined(__clang__)
#define GPUCLEAN_CONV_HOT __attribute__((optimize("O3", "fp-contract=fast")))
#define GPUCLEAN_CONV_INLINE __attribute__((always_inline, optimize("O3", "fp-contract=fast"))) inline
#else
#define GPUCLEAN_CONV_HOT
#define GPUCLEAN_CONV_INLINE __attribute__((always_inline)) inline
#endif

// Entry points compiled for one instruction set; everything they call is
// inlined (GPUCLEAN_CONV_INLINE) and so compiled for it too. Other compilers
// and architectures get the baseline path only.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define GPUCLEAN_CONV_X86 1
#define GPUCLEAN_TARGET_AVX512 \
  __attribute__((target("avx512f,avx512vl,avx512dq,avx2,fma"), optimize("O3", "fp-contract=fast")))
#define GPUCLEAN_TARGET_AVX2 __attribute__((target("avx2,fma"), optimize("O3", "fp-contract=fast")))
#else
#define GPUCLEAN_CONV_X86 0
#endif

namespace gpuclean::exec::kernels::conv {

// ------------------------------------------------------------------ SIMD

enum class Isa { kGeneric = 0, kAvx2 = 1, kAvx512 = 2 };
// The best the CPU supports.
Isa DetectedIsa();
// What kernels use: DetectedIsa() unless lowered with SetIsaForTesting.
Isa ActiveIsa();
// Tests run every code path on one machine; a request above DetectedIsa()
// is clamped to it. Returns the ISA now active.
Isa SetIsaForTesting(Isa isa);
const char* IsaName(Isa isa);

// Vector values only cross always-inlined helpers, never a real call, so the
// ABI note GCC attaches to them does not apply.
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

// A float vector of L lanes (GCC vector extension). Its operations compile to
// the instruction set of the entry point they are inlined into.
template <int L>
struct VecOf {
  typedef float type __attribute__((vector_size(4 * L), aligned(4)));
};
template <int L>
using Vec = typename VecOf<L>::type;

template <int L>
GPUCLEAN_CONV_INLINE Vec<L> LoadU(const float* p) {
  Vec<L> v;
  __builtin_memcpy(&v, p, sizeof(v));
  return v;
}
template <int L>
GPUCLEAN_CONV_INLINE void StoreU(float* p, const Vec<L>& v) {
  __builtin_memcpy(p, &v, sizeof(v));
}
template <int L>
GPUCLEAN_CONV_INLINE Vec<L> Splat(float x) {
  return Vec<L>{} + x;
}
template <int L>
GPUCLEAN_CONV_INLINE Vec<L> Max(const Vec<L>& a, const Vec<L>& b) {
  return a > b ? a : b;
}
template <int L>
GPUCLEAN_CONV_INLINE Vec<L> Min(const Vec<L>& a, const Vec<L>& b) {
  return a < b ? a : b;
}

#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

// ------------------------------------------------------------------ rules

// common.h's ActivationRange<float> as a callable (the GEMM epilogue's form):
// RELU [0,inf), RELU6 [0,6], RELU_N1_TO_1 [-1,1]; every other value, TANH and
// SIGN_BIT included, leaves the output unclamped.
struct Clamp {
  float lo = -std::numeric_limits<float>::infinity();
  float hi = std::numeric_limits<float>::infinity();
  float operator()(float x) const { return x < lo ? lo : (x > hi ? hi : x); }
};
Clamp ActivationClamp(tfl::ActivationFunctionType act);
// MediaPipe custom options use TfLiteFusedActivation (0 none, 1 relu,
// 2 relu_n1_to_1, 3 relu6, 4 tanh, 5 sign_bit, 6 sigmoid).
Clamp ActivationClampFromTfLite(int32_t act);

// Padding before the first element along one axis, by ir::ComputeWindowPadding
// (the one window geometry); works for SAME and VALID alike once `out` is the
// real output size.
int32_t PaddingBefore(int32_t in, int32_t filter, int32_t stride, int32_t dilation, int32_t out);

// Throws Error(kUnsupported) naming the op and the problem.
[[noreturn]] void ThrowUnsupportedAttr(const ir::Subgraph& graph, const ir::Op& op, const std::string& what);
// Throws Error(kBadInput) naming the op and the problem.
[[noreturn]] void ThrowBadInput(const ir::Subgraph& graph, const ir::Op& op, const std::string& what);
// Every present input and output is float32 (also rejects hybrid int8 weights).
void RequireFloat32(const ir::Subgraph& graph, const ir::Op& op);
// Tensor rank from the graph, or -1 for an omitted input.
int InputRank(const ir::Subgraph& graph, const ir::Op& op, int i);

// ------------------------------------------------------------------ GEMM
//
//   C[m, n] = clamp( sum_k A(m, k) * B(n, k) + bias[n] )    m < M, n < N, k < K
//
// A and B are read through strides, so "weights [N, K]", "[K, N]" and
// transposed batch-matmul operands need no copies. C is row-major with row
// stride ldc (a channel slice of an NHWC tensor for grouped convolutions).

struct Strided {
  const float* p = nullptr;
  int64_t row = 0;  // stride between rows (m for A, n for B)
  int64_t col = 1;  // stride between k values
};

// A float buffer that is not zero-filled on allocation (it is always fully
// written before use).
class FloatBuffer {
 public:
  void Resize(size_t n) {
    if (n > capacity_) {
      data_.reset(new float[n]);
      capacity_ = n;
    }
    size_ = n;
  }
  float* data() { return data_.get(); }
  const float* data() const { return data_.get(); }
  size_t size() const { return size_; }

 private:
  std::unique_ptr<float[]> data_;
  size_t size_ = 0, capacity_ = 0;
};

// B packed for the GEMM: K cut into blocks of `kc`; per block, panels of `nr`
// columns stored [kc][nr], zero-padded; plus the bias padded to the panels.
struct PackedB {
  FloatBuffer data;
  std::vector<float> bias;
  int n = 0, k = 0, kc = 0, nr = 0, nv = 0, mr = 0;
  Isa isa = Isa::kGeneric;
  const float* source = nullptr;  // B's first element when packed (PackedWeights' key)
};
void PackB(Strided b, int n, int k, const float* bias, PackedB* out);
void PackB(ThreadPool& pool, Strided b, int n, int k, const float* bias, PackedB* out);

// B packed for op input `weights` (and its bias input, or none): once per
// interpreter when both are fixed, kept in the op's state (one entry per
// `slot`, a group of a grouped convolution), else into `scratch` on every
// call. Returns the packed form to multiply with.
const PackedB& PackedWeights(KernelContext& ctx, int weights, int bias_input, int slot, Strided b, int n, int k,
                             const float* bias, PackedB* scratch);

// C = A * B^T + bias, clamped; parallel over the pool.
void Gemm(ThreadPool& pool, int64_t m, Strided a, const PackedB& b, Clamp clamp, float* c, int64_t ldc);
// Packs B and multiplies; for a single use of B. Small M goes to a dot-product
// path that reads B in place.
void Gemm(ThreadPool& pool, int64_t m, int n, int k, Strided a, Strided b, const float* bias, Clamp clamp, float* c,
          int64_t ldc);

// A convolution as a GEMM over an implicit im2col matrix: rows are output
// pixels (b, oy, ox), columns (ky, kx, ic) - the order of OHWI filters.
struct ConvGeometry {
  int batch = 1, in_h = 0, in_w = 0;
  int64_t in_pixel_stride = 0;  // floats between adjacent input pixels (input channels)
  int in_c_offset = 0;          // first input channel read (group offset)
  int in_c = 0;                 // input channels read per pixel (per group)
  int out_h = 0, out_w = 0;
  int kh = 1, kw = 1, stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1, pad_top = 0, pad_left = 0;
};
void ConvGemm(ThreadPool& pool, const float* input, const ConvGeometry& g, const PackedB& b, Clamp clamp, float* c,
              int64_t ldc);

// ------------------------------------------------------------------ oneDNN
// CONV_2D by oneDNN (onednn.cc), over all groups at once: true when it
// computed `out`; false when oneDNN is not built in, is disabled
// (GPUCLEAN_ONEDNN=0), or does not take the case (weights computed at run
// time, a padding it refuses): the caller then runs ConvGemm.
bool OneDnnConv2D(KernelContext& ctx, const ConvGeometry& g, int groups, int out_c, const float* w, const float* bias,
                  Clamp clamp, float* out);
// CONV_2D on integer codes by oneDNN's 8-bit convolution (onednn_codes.cc):
// true when the weights and this run's input are whole numbers of one
// power-of-two unit each (a dynamically quantized model's codes) and it
// computed `out` exactly; false otherwise (also with
// GPUCLEAN_INTEGER_CODES=0), and the caller runs OneDnnConv2D.
bool OneDnnCodesConv2D(KernelContext& ctx, const ConvGeometry& g, int groups, int out_c, const float* w,
                       const float* bias, Clamp clamp, float* out);
// How many convolutions OneDnnCodesConv2D computed in this process (tests).
int64_t IntegerCodeConvolutions();
// DEPTHWISE_CONV_2D by oneDNN: g.in_c is the input's channel count, out_c
// = in_c * the depth multiplier, `w` the [1, KH, KW, out_c] filter.
bool OneDnnDepthwiseConv2D(KernelContext& ctx, const ConvGeometry& g, int out_c, const float* w, const float* bias,
                           Clamp clamp, float* out);
// FULLY_CONNECTED by oneDNN's matmul: out[M, N] = x[M, K] w[N, K]^T + bias,
// clamped; the same contract.
bool OneDnnFullyConnected(KernelContext& ctx, int64_t m, int n, int k, const float* x, const float* w,
                          const float* bias, Clamp clamp, float* out);
// BATCH_MATMUL (inputs 0 and 1, output 0; ranks 2..5, batch broadcast) by
// oneDNN's matmul, both operands read in place; the same contract.
bool OneDnnBatchMatMul(KernelContext& ctx, bool adj_x, bool adj_y);
// Built in and not disabled.
bool OneDnnAvailable();
bool OneDnnDisabled();

// Row-range helper for ParallelFor with a work-based grain.
int64_t GrainFor(int64_t items, int64_t work_per_item);

// ------------------------------------------------------------------ shared op cores

// 2-D pooling over NHWC float32: the max, the average or the root mean square
// of the in-bounds elements of each window (padding never counts), then the
// clamp.
struct PoolGeometry {
  int batch = 1, in_h = 0, in_w = 0, c = 0, out_h = 0, out_w = 0;
  int fh = 1, fw = 1, stride_h = 1, stride_w = 1, pad_top = 0, pad_left = 0;
};
enum class PoolKind { kMax, kAverage, kL2 };
void Pool2D(ThreadPool& pool, const float* in, const PoolGeometry& g, PoolKind kind, Clamp clamp, float* out);
// MAX_POOL_2D / AVERAGE_POOL_2D / L2_POOL_2D: float32 NHWC with
// Pool2DOptions (check), and the whole op (eval).
void CheckPool2D(const ir::Subgraph& graph, const ir::Op& op);
void EvalPool2D(KernelContext& ctx, PoolKind kind);

// Transposed convolution: input [N, H, W, I], weights [O, KH, KW, I], output
// [N, OH, OW, O]; input pixel (iy, ix) tap (ky, kx) lands on output
// (iy*stride_h - pad_top + ky, ix*stride_w - pad_left + kx) when inside.
// Output = bias (or 0) + contributions, then the clamp.
struct TransposeConvGeometry {
  int batch = 1, in_h = 0, in_w = 0, in_c = 0, out_h = 0, out_w = 0, out_c = 0;
  int kh = 1, kw = 1, stride_h = 1, stride_w = 1, pad_top = 0, pad_left = 0;
};
void TransposeConv(ThreadPool& pool, const float* in, const float* weights, const float* bias,
                   const TransposeConvGeometry& g, Clamp clamp, float* out);

}  // namespace gpuclean::exec::kernels::conv
