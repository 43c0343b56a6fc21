#pragma once
// The vocabulary every kernel family shares (conv_util, layout_util,
// elementwise_util build on it): naming an op in messages, reading options,
// reaching an op's tensors, activations and half conversion.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include "exec/kernel.h"
#include "gpuclean/half.h"

namespace gpuclean::exec::kernels {

// ------------------------------------------------------------------ naming

inline int OpIndexOf(const ir::Subgraph& graph, const ir::Op& op) {
  if (!graph.ops.empty() && &op >= graph.ops.data() && &op < graph.ops.data() + graph.ops.size())
    return static_cast<int>(&op - graph.ops.data());
  return -1;
}

// "op 3 (SOFTMAX)", the prefix every message of the interpreter uses.
inline std::string OpLabel(const ir::Subgraph& graph, const ir::Op& op) {
  return fmt::format("op {} ({})", OpIndexOf(graph, op), op.name());
}
inline std::string OpLabel(const KernelContext& ctx) { return fmt::format("op {} ({})", ctx.op_index, ctx.op.name()); }

template <typename... Args>
[[noreturn]] void ThrowOpUnsupported(const ir::Subgraph& graph, const ir::Op& op, fmt::format_string<Args...> format,
                                     Args&&... args) {
  ThrowUnsupported(fmt::format("{}: {}", OpLabel(graph, op), fmt::format(format, std::forward<Args>(args)...)));
}

template <typename... Args>
[[noreturn]] void ThrowOpBadInput(const KernelContext& ctx, fmt::format_string<Args...> format, Args&&... args) {
  ThrowBadInput(fmt::format("{}: {}", OpLabel(ctx), fmt::format(format, std::forward<Args>(args)...)));
}

// ------------------------------------------------------------------ options and tensors

// Options table of the op, or LiteRT's defaults when the model gives none.
template <typename T>
T OptionsOr(const ir::Op& op) {
  if (op.options.type == tfl::BuiltinOptionsUnionTraits<T>::enum_value && op.options.value)
    return *static_cast<const T*>(op.options.value);
  return T{};
}

inline const ir::Tensor* IrInput(const ir::Subgraph& graph, const ir::Op& op, int i) {
  if (i >= static_cast<int>(op.inputs.size()) || op.inputs[i] < 0) return nullptr;
  return &graph.tensors.at(op.inputs[i]);
}
inline const ir::Tensor* IrOutput(const ir::Subgraph& graph, const ir::Op& op, int i) {
  if (i >= static_cast<int>(op.outputs.size()) || op.outputs[i] < 0) return nullptr;
  return &graph.tensors.at(op.outputs[i]);
}

// ------------------------------------------------------------------ activations and halves

// LiteRT applies a fused activation (ADD/SUB/MUL/DIV, convolutions, pooling)
// as a clamp to [lo, hi] (CalculateActivationRange). TANH and SIGN_BIT have
// no range there and are silently ignored, both on float and on int32 tensors (checked on
// LiteRT.js 2.5.3: ADD with fused TANH returns the plain sum). Without a
// clamp, float results keep ±inf: LiteRT runs float ADD/SUB/MUL/DIV through
// XNNPACK, whose open range lets 1/0 come out inf (TFLite's own kernels would
// clamp to ±FLT_MAX).
template <typename T>
struct Range {
  T lo, hi;
};
template <typename T>
Range<T> ActivationRange(tfl::ActivationFunctionType act) {
  if constexpr (std::is_floating_point_v<T>) {
    constexpr T inf = std::numeric_limits<T>::infinity();
    switch (act) {
      case tfl::ActivationFunctionType_RELU: return {T(0), inf};
      case tfl::ActivationFunctionType_RELU6: return {T(0), T(6)};
      case tfl::ActivationFunctionType_RELU_N1_TO_1: return {T(-1), T(1)};
      default: return {-inf, inf};
    }
  } else {
    constexpr T lo = std::numeric_limits<T>::lowest(), hi = std::numeric_limits<T>::max();
    switch (act) {
      case tfl::ActivationFunctionType_RELU: return {T(0), hi};
      case tfl::ActivationFunctionType_RELU6: return {T(0), T(6)};
      case tfl::ActivationFunctionType_RELU_N1_TO_1: return {T(-1), T(1)};
      default: return {lo, hi};
    }
  }
}

// std::min/std::max order: NaN passes through the clamp unchanged.
template <typename T>
inline T Clamp(T x, Range<T> r) {
  return std::min(std::max(x, r.lo), r.hi);
}

inline float ApplyActivation(float x, tfl::ActivationFunctionType act) {
  switch (act) {
    case tfl::ActivationFunctionType_NONE: return x;
    case tfl::ActivationFunctionType_RELU: return std::max(x, 0.0f);
    case tfl::ActivationFunctionType_RELU_N1_TO_1: return std::clamp(x, -1.0f, 1.0f);
    case tfl::ActivationFunctionType_RELU6: return std::clamp(x, 0.0f, 6.0f);
    case tfl::ActivationFunctionType_TANH: return std::tanh(x);
    case tfl::ActivationFunctionType_SIGN_BIT: return std::signbit(x) ? 1.0f : 0.0f;
  }
  return x;
}

inline bool IsSupportedActivation(tfl::ActivationFunctionType act) {
  return act != tfl::ActivationFunctionType_SIGN_BIT;
}

using ::gpuclean::FloatToHalf;
using ::gpuclean::HalfToFloat;

}  // namespace gpuclean::exec::kernels
