// CAST between bool, uint8, int8, int16, uint16, int32, uint32, int64,
// float16, bfloat16, float32 and float64, following LiteRT's cast kernel:
//  - the source type is the input tensor's (CastOptions.in_data_type is
//    ignored, as LiteRT ignores it); the target is the output tensor's;
//  - to bool: x != 0 (NaN is true); from bool: 0 or 1;
//  - float32 -> int32 truncates toward zero and saturates, and NaN gives
//    INT32_MAX (LiteRT tests `x <= max` first; checked on LiteRT.js:
//    cast(NaN) = 2147483647, cast(-2.7) = -2, cast(3e9) = 2147483647);
//  - other float -> integer casts truncate and saturate, NaN gives 0
//    (LiteRT clamps for uint8/int16; elsewhere its static_cast is formally
//    undefined and WebAssembly's saturating truncation is what LiteRT.js does);
//  - integer -> integer wraps (C++ modular conversion);
//  - -> float16 rounds to nearest even through float32, -> bfloat16 too.
#include "exec/kernels/elementwise_util.h"

namespace gpuclean::exec::kernels {
namespace {

struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

inline float BFloat16ToFloat(uint16_t b) {
  const uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline uint16_t FloatToBFloat16(float f) {
  if (std::isnan(f)) return std::signbit(f) ? 0xFFC0 : 0x7FC0;
  uint32_t u;
  std::memcpy(&u, &f, 4);
  u += 0x7FFF + ((u >> 16) & 1);  // round to nearest even
  return static_cast<uint16_t>(u >> 16);
}

// The value of a source element as the widest type that holds it exactly.
template <typename From>
inline auto Widen(From v) {
  if constexpr (std::is_same_v<From, Half>)
    return HalfToFloat(v.bits);
  else if constexpr (std::is_same_v<From, BFloat16>)
    return BFloat16ToFloat(v.bits);
  else
    return v;
}

template <typename From, typename To>
inline To Convert(From in) {
  const auto v = Widen(in);
  using V = decltype(v);
  if constexpr (std::is_same_v<To, bool>) {
    return v != V(0);
  } else if constexpr (std::is_same_v<To, Half>) {
    return Half{FloatToHalf(static_cast<float>(v))};
  } else if constexpr (std::is_same_v<To, BFloat16>) {
    return BFloat16{FloatToBFloat16(static_cast<float>(v))};
  } else if constexpr (std::is_floating_point_v<V> && std::is_integral_v<To>) {
    if constexpr (std::is_same_v<From, float> && std::is_same_v<To, int32_t>) {
      if (std::isnan(v)) return std::numeric_limits<int32_t>::max();
    }
    return ew::SaturatingTrunc<To>(v);
  } else {
    return static_cast<To>(v);
  }
}

// Calls fn(T{}) for the C++ type of `dtype`.
template <typename Fn>
void DispatchCastType(const KernelContext& ctx, ir::DType dtype, Fn&& fn) {
  switch (dtype) {
    case tfl::TensorType_BOOL: return fn(bool{});
    case tfl::TensorType_UINT8: return fn(uint8_t{});
    case tfl::TensorType_INT8: return fn(int8_t{});
    case tfl::TensorType_INT16: return fn(int16_t{});
    case tfl::TensorType_UINT16: return fn(uint16_t{});
    case tfl::TensorType_INT32: return fn(int32_t{});
    case tfl::TensorType_UINT32: return fn(uint32_t{});
    case tfl::TensorType_INT64: return fn(int64_t{});
    case tfl::TensorType_FLOAT16: return fn(Half{});
    case tfl::TensorType_BFLOAT16: return fn(BFloat16{});
    case tfl::TensorType_FLOAT32: return fn(float{});
    case tfl::TensorType_FLOAT64: return fn(double{});
    default: ThrowUnsupportedDtype(ctx.graph, ctx.op, dtype);
  }
}

bool IsCastType(ir::DType d) {
  switch (d) {
    case tfl::TensorType_BOOL:
    case tfl::TensorType_UINT8:
    case tfl::TensorType_INT8:
    case tfl::TensorType_INT16:
    case tfl::TensorType_UINT16:
    case tfl::TensorType_INT32:
    case tfl::TensorType_UINT32:
    case tfl::TensorType_INT64:
    case tfl::TensorType_FLOAT16:
    case tfl::TensorType_BFLOAT16:
    case tfl::TensorType_FLOAT32:
    case tfl::TensorType_FLOAT64: return true;
    default: return false;
  }
}

void CheckCast(const ir::Subgraph& graph, const ir::Op& op) {
  ew::RequireCounts(graph, op, 1, 1);
  for (ir::DType d : {ew::InputDType(graph, op, 0), ew::OutputDType(graph, op, 0)})
    if (!IsCastType(d)) ThrowUnsupportedDtype(graph, op, d);
  if (const auto* o = op.options.AsCastOptions(); o && !IsCastType(o->out_data_type))
    ThrowUnsupportedDtype(graph, op, o->out_data_type);
}

void EvalCast(KernelContext& ctx) {
  DispatchCastType(ctx, ctx.input(0).dtype, [&](auto from_tag) {
    using From = decltype(from_tag);
    DispatchCastType(ctx, ctx.output(0).dtype, [&](auto to_tag) {
      using To = decltype(to_tag);
      if constexpr (std::is_same_v<From, To>) {
        std::memcpy(ctx.output(0).data, ctx.input(0).data, ctx.output(0).bytes);
      } else if constexpr (std::is_same_v<From, bool>) {
        // Any non-zero byte is true.
        ew::Unary<uint8_t, To>(ctx, [](uint8_t v) { return Convert<bool, To>(v != 0); });
      } else {
        ew::Unary<From, To>(ctx, [](From v) { return Convert<From, To>(v); });
      }
    });
  });
}

}  // namespace

Kernel CastKernel() { return {CheckCast, EvalCast}; }

}  // namespace gpuclean::exec::kernels
