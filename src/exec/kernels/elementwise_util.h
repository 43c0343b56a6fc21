#pragma once
// Helpers of the elementwise family: numpy broadcasting over any rank, flat
// unary maps, fused-activation ranges, dtype checks and messages. Every
// elementwise kernel is one call of Unary/Binary/Ternary with a lambda, so the
// loops live here once and stay simple enough for the compiler to vectorise.
//
// Broadcasting: input shapes are right-aligned against the output shape; a
// dimension of size 1 repeats. Before iterating, dimensions of size 1 are
// dropped and neighbours that every input treats alike (all contiguous, or
// all repeated) are merged. Same-shape operands thereby become one flat loop
// and a scalar operand one flat loop with a constant; the general case is an
// outer loop over rows and an inner loop whose per-input stride is 0 or 1.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "exec/kernel.h"
#include "exec/kernels/common.h"
#include "exec/kernels/conv_util.h"

namespace gpuclean::exec::kernels::ew {

// Elements per parallel chunk: below this a loop runs on the calling thread.
inline constexpr int64_t kGrain = 1 << 15;

inline ir::DType InputDType(const ir::Subgraph& graph, const ir::Op& op, int i) {
  if (i >= static_cast<int>(op.inputs.size()) || op.inputs[i] < 0)
    ThrowBadInput(fmt::format("{}: input {} is missing", OpLabel(graph, op), i));
  return graph.tensors.at(op.inputs[i]).dtype;
}
inline ir::DType OutputDType(const ir::Subgraph& graph, const ir::Op& op, int i) {
  if (i >= static_cast<int>(op.outputs.size()) || op.outputs[i] < 0)
    ThrowBadInput(fmt::format("{}: output {} is missing", OpLabel(graph, op), i));
  return graph.tensors.at(op.outputs[i]).dtype;
}

inline void RequireCounts(const ir::Subgraph& graph, const ir::Op& op, int inputs, int outputs) {
  if (static_cast<int>(op.inputs.size()) < inputs || static_cast<int>(op.outputs.size()) < outputs)
    ThrowBadInput(fmt::format("{}: expects {} input(s) and {} output(s), has {} and {}", OpLabel(graph, op), inputs,
                              outputs, op.inputs.size(), op.outputs.size()));
  for (int i = 0; i < inputs; ++i) InputDType(graph, op, i);
  for (int i = 0; i < outputs; ++i) OutputDType(graph, op, i);
}

// Input `i` must have one of `dtypes` (ThrowUnsupportedDtype otherwise).
inline void RequireInputDType(const ir::Subgraph& graph, const ir::Op& op, int i,
                              std::initializer_list<ir::DType> dtypes) {
  const ir::DType d = InputDType(graph, op, i);
  if (std::find(dtypes.begin(), dtypes.end(), d) == dtypes.end()) ThrowUnsupportedDtype(graph, op, d);
}

// The checks of an op whose inputs [0, n) share one dtype out of `dtypes`
// and whose output has `out` (or the inputs' dtype when `out` is unset).
inline void CheckSameDType(const ir::Subgraph& graph, const ir::Op& op, int n, std::initializer_list<ir::DType> dtypes,
                           std::optional<ir::DType> out = std::nullopt) {
  RequireCounts(graph, op, n, 1);
  RequireInputDType(graph, op, 0, dtypes);
  const ir::DType d = InputDType(graph, op, 0);
  for (int i = 1; i < n; ++i)
    if (InputDType(graph, op, i) != d)
      ThrowBadInput(fmt::format("{}: input {} is {} but input 0 is {}", OpLabel(graph, op), i,
                                ir::DTypeName(InputDType(graph, op, i)), ir::DTypeName(d)));
  const ir::DType want = out.value_or(d);
  if (OutputDType(graph, op, 0) != want)
    ThrowBadInput(fmt::format("{}: output is {} but should be {}", OpLabel(graph, op),
                              ir::DTypeName(OutputDType(graph, op, 0)), ir::DTypeName(want)));
}

// ------------------------------------------------------------------ fused activations

// The clamp ranges (Range, ActivationRange, Clamp) are common.h's.

// ------------------------------------------------------------------ broadcasting

// Collapsed iteration space of an output and N inputs broadcast against it.
template <int N>
struct BroadcastPlan {
  std::vector<int64_t> dims;                    // outer..inner, at least one
  std::array<std::vector<int64_t>, N> strides;  // element strides per input; 0 = repeated
  int64_t total = 1;

  int64_t inner() const { return dims.back(); }
  int64_t inner_stride(int k) const { return strides[k].back(); }
};

template <int N>
BroadcastPlan<N> MakeBroadcastPlan(const std::vector<int32_t>& out_shape,
                                   const std::array<const std::vector<int32_t>*, N>& in_shapes) {
  const int rank = static_cast<int>(out_shape.size());
  // Per output dimension: its size and, per input, its stride (0 if repeated).
  std::vector<int64_t> dims;
  std::array<std::vector<int64_t>, N> strides;
  std::array<std::vector<int64_t>, N> full;
  for (int k = 0; k < N; ++k) {
    const auto& s = *in_shapes[k];
    if (static_cast<int>(s.size()) > rank)
      ThrowInternal(fmt::format("broadcast: input rank {} exceeds output rank {}", s.size(), rank));
    full[k].assign(rank, 0);
    int64_t stride = 1;
    for (int d = rank - 1, j = static_cast<int>(s.size()) - 1; j >= 0; --d, --j) {
      if (s[j] == out_shape[d]) {
        full[k][d] = stride;
      } else if (s[j] != 1) {
        ThrowInternal(fmt::format("broadcast: input dim {} does not match output dim {}", s[j], out_shape[d]));
      }
      stride *= s[j];
    }
  }
  for (int d = 0; d < rank; ++d) {
    if (out_shape[d] == 1) continue;  // size-1 dims never advance anything
    bool merge = !dims.empty();
    for (int k = 0; k < N && merge; ++k) {
      const int64_t outer = strides[k].back(), inner = full[k][d];
      // Mergeable when both repeat, or the outer one steps over exactly the inner extent.
      merge = (outer == 0 && inner == 0) || (outer != 0 && inner != 0 && outer == inner * out_shape[d]);
    }
    if (merge) {
      dims.back() *= out_shape[d];
      for (int k = 0; k < N; ++k) strides[k].back() = full[k][d];
    } else {
      dims.push_back(out_shape[d]);
      for (int k = 0; k < N; ++k) strides[k].push_back(full[k][d]);
    }
  }
  if (dims.empty()) {
    dims.push_back(1);
    for (int k = 0; k < N; ++k) strides[k].push_back(0);
  }
  BroadcastPlan<N> plan;
  plan.dims = std::move(dims);
  plan.strides = std::move(strides);
  plan.total = 1;
  for (int64_t d : plan.dims) plan.total *= d;
  for (int32_t d : out_shape)
    if (d == 0) plan.total = 0;
  return plan;
}

// Calls run(out_offset, in_offsets, count) over contiguous runs of the output
// (each input advancing by its inner stride), in parallel.
template <int N, typename Run>
void ForEachRun(const BroadcastPlan<N>& plan, ThreadPool& pool, Run&& run) {
  if (plan.total == 0) return;
  const int64_t inner = plan.inner();
  const int rank = static_cast<int>(plan.dims.size());
  if (rank == 1) {
    pool.ParallelFor(inner, kGrain, [&](int64_t begin, int64_t end) {
      std::array<int64_t, N> offs;
      for (int k = 0; k < N; ++k) offs[k] = begin * plan.strides[k][0];
      run(begin, offs, end - begin);
    });
    return;
  }
  const int64_t rows = plan.total / inner;
  const int64_t grain = std::max<int64_t>(1, kGrain / std::max<int64_t>(inner, 1));
  pool.ParallelFor(rows, grain, [&](int64_t begin, int64_t end) {
    // Multi-index of row `begin` over dims [0, rank-1).
    std::vector<int64_t> idx(rank - 1, 0);
    std::array<int64_t, N> offs{};
    int64_t rem = begin;
    for (int d = rank - 2; d >= 0; --d) {
      idx[d] = rem % plan.dims[d];
      rem /= plan.dims[d];
      for (int k = 0; k < N; ++k) offs[k] += idx[d] * plan.strides[k][d];
    }
    for (int64_t row = begin; row < end; ++row) {
      run(row * inner, offs, inner);
      for (int d = rank - 2; d >= 0; --d) {
        for (int k = 0; k < N; ++k) offs[k] += plan.strides[k][d];
        if (++idx[d] < plan.dims[d]) break;
        for (int k = 0; k < N; ++k) offs[k] -= plan.strides[k][d] * plan.dims[d];
        idx[d] = 0;
      }
    }
  });
}

// ------------------------------------------------------------------ maps

// The element loops. Elements go through small local blocks: a fixed-length
// loop over a block vectorises even under GCC's -O2 cost model, which refuses
// a plain loop that needs a remainder loop or a runtime aliasing check. An
// input flagged false in the template repeats its first element.
inline constexpr int kBlock = 16;

template <typename TI, typename TO, typename F>
[[gnu::always_inline]] inline void UnaryRunBody(const TI* x, TO* z, int64_t n, F& f) {
  int64_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    TI a[kBlock];
    TO c[kBlock];
    for (int j = 0; j < kBlock; ++j) a[j] = x[i + j];
    for (int j = 0; j < kBlock; ++j) c[j] = f(a[j]);
    for (int j = 0; j < kBlock; ++j) z[i + j] = c[j];
  }
  for (; i < n; ++i) z[i] = f(x[i]);
}

template <bool kStepA, bool kStepB, typename TA, typename TB, typename TO, typename F>
[[gnu::always_inline]] inline void BinaryRunBody(const TA* x, const TB* y, TO* z, int64_t n, F& f) {
  int64_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    TA a[kBlock];
    TB b[kBlock];
    TO c[kBlock];
    for (int j = 0; j < kBlock; ++j) {
      a[j] = kStepA ? x[i + j] : x[0];
      b[j] = kStepB ? y[i + j] : y[0];
    }
    for (int j = 0; j < kBlock; ++j) c[j] = f(a[j], b[j]);
    for (int j = 0; j < kBlock; ++j) z[i + j] = c[j];
  }
  for (; i < n; ++i) z[i] = f(kStepA ? x[i] : x[0], kStepB ? y[i] : y[0]);
}

template <bool kStepA, bool kStepB, bool kStepC, typename TA, typename TB, typename TC, typename TO, typename F>
[[gnu::always_inline]] inline void TernaryRunBody(const TA* x, const TB* y, const TC* w, TO* z, int64_t n, F& f) {
  int64_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    TA a[kBlock];
    TB b[kBlock];
    TC d[kBlock];
    TO c[kBlock];
    for (int j = 0; j < kBlock; ++j) {
      a[j] = kStepA ? x[i + j] : x[0];
      b[j] = kStepB ? y[i + j] : y[0];
      d[j] = kStepC ? w[i + j] : w[0];
    }
    for (int j = 0; j < kBlock; ++j) c[j] = f(a[j], b[j], d[j]);
    for (int j = 0; j < kBlock; ++j) z[i + j] = c[j];
  }
  for (; i < n; ++i) z[i] = f(kStepA ? x[i] : x[0], kStepB ? y[i] : y[0], kStepC ? w[i] : w[0]);
}

// The runs compiled for AVX-512 too, chosen at run time (conv::ActiveIsa):
// the library is built for the baseline's four-lane vectors. Small tensors
// gain (mha_parity's DIV 0.006 -> 0.003 ms); large ones are bound by memory
// either way. Each element is the same operation, so the same bits.
#if GPUCLEAN_CONV_X86
#define GPUCLEAN_EW_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl"), flatten))
template <typename TI, typename TO, typename F>
GPUCLEAN_EW_AVX512 void UnaryRunAvx512(const TI* x, TO* z, int64_t n, F& f) {
  UnaryRunBody(x, z, n, f);
}
template <bool kStepA, bool kStepB, typename TA, typename TB, typename TO, typename F>
GPUCLEAN_EW_AVX512 void BinaryRunAvx512(const TA* x, const TB* y, TO* z, int64_t n, F& f) {
  BinaryRunBody<kStepA, kStepB>(x, y, z, n, f);
}
template <bool kStepA, bool kStepB, bool kStepC, typename TA, typename TB, typename TC, typename TO, typename F>
GPUCLEAN_EW_AVX512 void TernaryRunAvx512(const TA* x, const TB* y, const TC* w, TO* z, int64_t n, F& f) {
  TernaryRunBody<kStepA, kStepB, kStepC>(x, y, w, z, n, f);
}
#undef GPUCLEAN_EW_AVX512
inline bool RunsOnAvx512() { return conv::ActiveIsa() == conv::Isa::kAvx512; }
#endif

template <typename TI, typename TO, typename F>
[[gnu::flatten]] inline void UnaryRun(const TI* x, TO* z, int64_t n, F& f) {
#if GPUCLEAN_CONV_X86
  if (RunsOnAvx512()) return UnaryRunAvx512(x, z, n, f);
#endif
  UnaryRunBody(x, z, n, f);
}
template <bool kStepA, bool kStepB, typename TA, typename TB, typename TO, typename F>
[[gnu::flatten]] inline void BinaryRun(const TA* x, const TB* y, TO* z, int64_t n, F& f) {
#if GPUCLEAN_CONV_X86
  if (RunsOnAvx512()) return BinaryRunAvx512<kStepA, kStepB>(x, y, z, n, f);
#endif
  BinaryRunBody<kStepA, kStepB>(x, y, z, n, f);
}
template <bool kStepA, bool kStepB, bool kStepC, typename TA, typename TB, typename TC, typename TO, typename F>
[[gnu::flatten]] inline void TernaryRun(const TA* x, const TB* y, const TC* w, TO* z, int64_t n, F& f) {
#if GPUCLEAN_CONV_X86
  if (RunsOnAvx512()) return TernaryRunAvx512<kStepA, kStepB, kStepC>(x, y, w, z, n, f);
#endif
  TernaryRunBody<kStepA, kStepB, kStepC>(x, y, w, z, n, f);
}

// Calls fn(std::bool_constant<b>{}) for a runtime b.
template <typename Fn>
inline void WithBool(bool b, Fn&& fn) {
  if (b)
    fn(std::true_type{});
  else
    fn(std::false_type{});
}

// out[i] = f(in[i]) over equal-sized tensors.
template <typename TI, typename TO, typename F>
void Unary(KernelContext& ctx, F f) {
  const TI* in = ctx.input(0).as<TI>();
  TO* out = ctx.output(0).as<TO>();
  const int64_t n = ctx.output(0).num_elements();
  if (ctx.input(0).num_elements() != n)
    ThrowInternal(fmt::format("{}: input has {} elements, output {}", OpLabel(ctx), ctx.input(0).num_elements(), n));
  ctx.pool.ParallelFor(n, kGrain,
                       [&](int64_t begin, int64_t end) { UnaryRun(in + begin, out + begin, end - begin, f); });
}

// out = f(a, b) with numpy broadcasting; inputs 0 and 1, output 0.
template <typename TA, typename TB, typename TO, typename F>
void Binary(KernelContext& ctx, F f) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  Tensor& o = ctx.output(0);
  const auto plan = MakeBroadcastPlan<2>(o.shape, {&a.shape, &b.shape});
  const TA* pa = a.as<TA>();
  const TB* pb = b.as<TB>();
  TO* po = o.as<TO>();
  const bool sa = plan.inner_stride(0) != 0, sb = plan.inner_stride(1) != 0;
  ForEachRun<2>(plan, ctx.pool, [&](int64_t oo, const std::array<int64_t, 2>& io, int64_t n) {
    const TA* x = pa + io[0];
    const TB* y = pb + io[1];
    TO* z = po + oo;
    if (sa && sb) {
      BinaryRun<true, true>(x, y, z, n, f);
    } else if (sa) {
      BinaryRun<true, false>(x, y, z, n, f);
    } else if (sb) {
      BinaryRun<false, true>(x, y, z, n, f);
    } else {
      const TO v = f(x[0], y[0]);
      std::fill(z, z + n, v);
    }
  });
}

// o = f(a, b, c) with numpy broadcasting of all three inputs.
template <typename TA, typename TB, typename TC, typename TO, typename F>
void Ternary(ThreadPool& pool, const Tensor& a, const Tensor& b, const Tensor& c, Tensor& o, F f) {
  const auto plan = MakeBroadcastPlan<3>(o.shape, {&a.shape, &b.shape, &c.shape});
  const TA* pa = a.as<TA>();
  const TB* pb = b.as<TB>();
  const TC* pc = c.as<TC>();
  TO* po = o.as<TO>();
  const bool sa = plan.inner_stride(0) != 0, sb = plan.inner_stride(1) != 0, sc = plan.inner_stride(2) != 0;
  ForEachRun<3>(plan, pool, [&](int64_t oo, const std::array<int64_t, 3>& io, int64_t n) {
    const TA* x = pa + io[0];
    const TB* y = pb + io[1];
    const TC* w = pc + io[2];
    TO* z = po + oo;
    WithBool(sa, [&](auto ka) {
      WithBool(sb, [&](auto kb) {
        WithBool(sc, [&](auto kc) {
          TernaryRun<decltype(ka)::value, decltype(kb)::value, decltype(kc)::value>(x, y, w, z, n, f);
        });
      });
    });
  });
}
template <typename TA, typename TB, typename TC, typename TO, typename F>
void Ternary(KernelContext& ctx, F f) {
  Ternary<TA, TB, TC, TO>(ctx.pool, ctx.input(0), ctx.input(1), ctx.input(2), ctx.output(0), f);
}

// Calls fn(U{}) with U the unsigned type as wide as one element of `dtype`.
template <typename Fn>
void DispatchBySize(const KernelContext& ctx, ir::DType dtype, Fn&& fn) {
  switch (ir::DTypeSize(dtype)) {
    case 1: return fn(uint8_t{});
    case 2: return fn(uint16_t{});
    case 4: return fn(uint32_t{});
    case 8: return fn(uint64_t{});
    default: ThrowUnsupportedDtype(ctx.graph, ctx.op, dtype);
  }
}

// Unsigned-wrapping integer arithmetic (LiteRT's int32 ADD/SUB/MUL overflow
// wraps on every target it runs on; in C++ signed overflow would be UB).
template <typename T>
inline T WrapAdd(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}
template <typename T>
inline T WrapSub(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
  } else {
    return a - b;
  }
}
template <typename T>
inline T WrapMul(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    return a * b;
  }
}

// Floating value -> integer type, truncating toward zero and saturating at
// the type's limits; NaN gives 0 (what WebAssembly's trunc_sat, and so
// LiteRT.js, produce where TFLite's static_cast is formally undefined).
template <typename I, typename F>
inline I SaturatingTrunc(F x) {
  if (std::isnan(x)) return I(0);
  if (x <= static_cast<F>(std::numeric_limits<I>::lowest())) return std::numeric_limits<I>::lowest();
  if (x >= static_cast<F>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  return static_cast<I>(x);
}

// Throws the LiteRT "Division by 0" error when any divisor is zero (integer
// DIV, FLOOR_DIV of any type).
template <typename T>
void RequireNonZeroDivisor(const KernelContext& ctx, const Tensor& divisor) {
  const T* p = divisor.as<T>();
  const int64_t n = divisor.num_elements();
  for (int64_t i = 0; i < n; ++i)
    if (p[i] == T(0))
      ThrowBadInput(
          fmt::format("{}: division by 0 (divisor element {}); LiteRT fails to invoke here too", OpLabel(ctx), i));
}

// Options of the op, or nullptr.
template <typename T>
const T* OptionsOf(const ir::Op& op);
template <>
inline const tfl::AddOptionsT* OptionsOf(const ir::Op& op) {
  return op.options.AsAddOptions();
}
template <>
inline const tfl::SubOptionsT* OptionsOf(const ir::Op& op) {
  return op.options.AsSubOptions();
}
template <>
inline const tfl::MulOptionsT* OptionsOf(const ir::Op& op) {
  return op.options.AsMulOptions();
}
template <>
inline const tfl::DivOptionsT* OptionsOf(const ir::Op& op) {
  return op.options.AsDivOptions();
}

// The fused activation of ADD/SUB/MUL/DIV (NONE when the options are absent).
template <typename Options>
tfl::ActivationFunctionType FusedActivation(const ir::Op& op) {
  const Options* o = OptionsOf<Options>(op);
  return o ? o->fused_activation_function : tfl::ActivationFunctionType_NONE;
}

// ------------------------------------------------------------------ dtypes

inline constexpr ir::DType kF32 = tfl::TensorType_FLOAT32;
inline constexpr ir::DType kI32 = tfl::TensorType_INT32;
inline constexpr ir::DType kI64 = tfl::TensorType_INT64;
inline constexpr ir::DType kBool = tfl::TensorType_BOOL;

template <typename T>
constexpr ir::DType DTypeOf() {
  if constexpr (std::is_same_v<T, float>)
    return tfl::TensorType_FLOAT32;
  else if constexpr (std::is_same_v<T, double>)
    return tfl::TensorType_FLOAT64;
  else if constexpr (std::is_same_v<T, int64_t>)
    return tfl::TensorType_INT64;
  else if constexpr (std::is_same_v<T, int32_t>)
    return tfl::TensorType_INT32;
  else if constexpr (std::is_same_v<T, int16_t>)
    return tfl::TensorType_INT16;
  else if constexpr (std::is_same_v<T, int8_t>)
    return tfl::TensorType_INT8;
  else if constexpr (std::is_same_v<T, uint64_t>)
    return tfl::TensorType_UINT64;
  else if constexpr (std::is_same_v<T, uint32_t>)
    return tfl::TensorType_UINT32;
  else if constexpr (std::is_same_v<T, uint16_t>)
    return tfl::TensorType_UINT16;
  else if constexpr (std::is_same_v<T, uint8_t>)
    return tfl::TensorType_UINT8;
  else if constexpr (std::is_same_v<T, bool>)
    return tfl::TensorType_BOOL;
  else
    static_assert(sizeof(T) == 0, "no dtype for this C++ type");
}

// Calls fn(T{}) for the T among Ts whose dtype is `d`; ThrowUnsupportedDtype
// when none is.
template <typename... Ts, typename Fn>
void Dispatch(const KernelContext& ctx, ir::DType d, Fn&& fn) {
  const bool done = ((d == DTypeOf<Ts>() ? (fn(Ts{}), true) : false) || ...);
  if (!done) ThrowUnsupportedDtype(ctx.graph, ctx.op, d);
}

// SELECT / SELECT_V2: a bool condition, x and y and the output of one
// element type among LiteRT's (bool, float32, uint8, int8, int16, int32, int64).
inline void CheckSelect(const ir::Subgraph& graph, const ir::Op& op) {
  RequireCounts(graph, op, 3, 1);
  RequireInputDType(graph, op, 0, {kBool});
  RequireInputDType(graph, op, 1,
                    {kBool, kF32, tfl::TensorType_UINT8, tfl::TensorType_INT8, tfl::TensorType_INT16, kI32, kI64});
  const ir::DType d = InputDType(graph, op, 1);
  if (InputDType(graph, op, 2) != d || OutputDType(graph, op, 0) != d)
    ThrowBadInput(fmt::format("{}: x, y and the output must have one dtype, got {}, {} and {}", OpLabel(graph, op),
                              ir::DTypeName(d), ir::DTypeName(InputDType(graph, op, 2)),
                              ir::DTypeName(OutputDType(graph, op, 0))));
}

// A float32 -> float32 map (the many activation-like unary ops).
inline void CheckFloatUnary(const ir::Subgraph& graph, const ir::Op& op) { CheckSameDType(graph, op, 1, {kF32}); }
template <typename F>
void FloatUnary(KernelContext& ctx, F f) {
  Unary<float, float>(ctx, f);
}
// The kernel of a float32 -> float32 op given by one function (a family
// file's per-row function; F is a constant, so the loop inlines it).
template <float (*F)(float)>
Kernel FloatMapKernel() {
  return {CheckFloatUnary, [](KernelContext& ctx) { FloatUnary(ctx, [](float x) { return F(x); }); }};
}

// A broadcasting binary op on T with a fused-activation clamp.
template <typename T, typename F>
void BinaryWithActivation(KernelContext& ctx, tfl::ActivationFunctionType act, F f) {
  const Range<T> r = ActivationRange<T>(act);
  const Range<T> none = ActivationRange<T>(tfl::ActivationFunctionType_NONE);
  if (r.lo == none.lo && r.hi == none.hi) {
    Binary<T, T, T>(ctx, f);
  } else {
    Binary<T, T, T>(ctx, [r, f](T a, T b) { return Clamp<T>(f(a, b), r); });
  }
}

}  // namespace gpuclean::exec::kernels::ew
