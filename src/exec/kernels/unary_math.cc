// The unary math family (FAMILY kUnaryMath in src/ir/ops.def): one function
// per op, each op's <Stem>Kernel() one line. Float-only ops map float32 to
// float32 through ew::FloatMapKernel; ABS, NEG and SIGN also take integers.
#include "exec/kernels/elementwise_util.h"

namespace gpuclean::exec::kernels {
namespace {

// EXP overflows to inf above ~88.72.
float Exp(float x) { return std::exp(x); }
// log(0) = -inf, log(x < 0) = NaN. LiteRT.js (XNNPACK) returns ~88.38 for
// log(inf) and ~88.78 for log(NaN); we keep the IEEE answers (inf, NaN).
float Log(float x) { return std::log(x); }
// sqrt(x < 0) = NaN, sqrt(-0) = -0.
float Sqrt(float x) { return std::sqrt(x); }
// rsqrt(0) = inf, rsqrt(-0) = -inf, rsqrt(x < 0) = NaN.
float Rsqrt(float x) { return 1.0f / std::sqrt(x); }
float Square(float x) { return x * x; }
float Sin(float x) { return std::sin(x); }  // radians
float Cos(float x) { return std::cos(x); }
float Floor(float x) { return std::floor(x); }
float Ceil(float x) { return std::ceil(x); }
// To the nearest integer, ties to even: LiteRT's RoundToNearest (floor, then
// up when the rest is over a half, or exactly a half with an odd floor).
// Adding and subtracting 2^23 rounds |x| < 2^23 the same way (the add rounds
// ties to even in the default mode; from 2^23 on every float is an
// integer). The choices are made on the bits, so the loop vectorises (a
// float compare may trap, and GCC keeps it a branch): fmod, then a
// nearbyint call per element, were most of a quantized model's ROUND time.
// x stays itself at +-0, from 2^23 on, at infinities and NaN; a zero result
// from a non-zero x is +0, as LiteRT's floor form gives.
float Round(float x) {
  constexpr float kTwo23 = 8388608.0f;
  constexpr uint32_t kTwo23Bits = 0x4B000000u, kSign = 0x80000000u;
  const uint32_t bits = __builtin_bit_cast(uint32_t, x), magnitude = bits & ~kSign;
  const float a = __builtin_bit_cast(float, magnitude);
  const uint32_t rounded = __builtin_bit_cast(uint32_t, (a + kTwo23) - kTwo23);
  const uint32_t with_sign = rounded | (rounded != 0 ? bits & kSign : 0u);
  const bool itself = magnitude >= kTwo23Bits || magnitude == 0;
  return __builtin_bit_cast(float, itself ? bits : with_sign);
}

// ABS: float32 and int32 (|INT_MIN| wraps to INT_MIN).
void EvalAbs(KernelContext& ctx) {
  ew::Dispatch<float, int32_t>(ctx, ctx.input(0).dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T>) {
      ew::Unary<T, T>(ctx, [](T x) { return x < 0 ? ew::WrapSub(T(0), x) : x; });
    } else {
      ew::Unary<T, T>(ctx, [](T x) { return std::fabs(x); });
    }
  });
}

// NEG: float32, int32, int64 (integers wrap: -INT_MIN = INT_MIN).
void EvalNeg(KernelContext& ctx) {
  ew::Dispatch<float, int32_t, int64_t>(ctx, ctx.input(0).dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T>) {
      ew::Unary<T, T>(ctx, [](T x) { return ew::WrapSub(T(0), x); });
    } else {
      ew::Unary<T, T>(ctx, [](T x) { return -x; });
    }
  });
}

// SIGN: float32 and int32, as tflite/kernels/sign.cc: 1, -1 or 0 (+0 for
// both zeros); NaN stays NaN.
void EvalSign(KernelContext& ctx) {
  ew::Dispatch<float, int32_t>(ctx, ctx.input(0).dtype, [&](auto tag) {
    using T = decltype(tag);
    ew::Unary<T, T>(ctx, [](T x) { return x > T(0) ? T(1) : x < T(0) ? T(-1) : x == T(0) ? T(0) : x; });
  });
}

}  // namespace

Kernel ExpKernel() { return ew::FloatMapKernel<Exp>(); }
Kernel LogKernel() { return ew::FloatMapKernel<Log>(); }
Kernel SqrtKernel() { return ew::FloatMapKernel<Sqrt>(); }
Kernel RsqrtKernel() { return ew::FloatMapKernel<Rsqrt>(); }
Kernel SquareKernel() { return ew::FloatMapKernel<Square>(); }
Kernel SinKernel() { return ew::FloatMapKernel<Sin>(); }
Kernel CosKernel() { return ew::FloatMapKernel<Cos>(); }
Kernel FloorKernel() { return ew::FloatMapKernel<Floor>(); }
Kernel CeilKernel() { return ew::FloatMapKernel<Ceil>(); }
Kernel RoundKernel() { return ew::FloatMapKernel<Round>(); }
Kernel AbsKernel() {
  return {[](const ir::Subgraph& g, const ir::Op& op) { ew::CheckSameDType(g, op, 1, {ew::kF32, ew::kI32}); }, EvalAbs};
}
Kernel NegKernel() {
  return {[](const ir::Subgraph& g, const ir::Op& op) {
            ew::CheckSameDType(g, op, 1, {ew::kF32, ew::kI32, ew::kI64});
          },
          EvalNeg};
}
Kernel SignKernel() {
  return {[](const ir::Subgraph& g, const ir::Op& op) {
            ew::CheckSameDType(g, op, 1, {ew::kF32, ew::kI32});
          },
          EvalSign};
}

}  // namespace gpuclean::exec::kernels
