// The plain binary arithmetic of the kBinaryMath family (src/ir/ops.def):
// a op b with numpy broadcasting. DIV, FLOOR_DIV and POW, whose integer and
// special-value rules are their own, keep files of their own.
#include "exec/kernels/elementwise_util.h"

namespace gpuclean::exec::kernels {
namespace {

// ADD / SUB / MUL: float32, int32, int64 (integers wrap on overflow), then
// the fused activation's clamp (Options: the op's options type; Op: the
// arithmetic, a lambda type).
template <typename Options, typename Op>
Kernel Arithmetic() {
  return {[](const ir::Subgraph& graph, const ir::Op& op) {
            ew::CheckSameDType(graph, op, 2, {ew::kF32, ew::kI32, ew::kI64});
          },
          [](KernelContext& ctx) {
            const auto act = ew::FusedActivation<Options>(ctx.op);
            ew::Dispatch<float, int32_t, int64_t>(ctx, ctx.input(0).dtype, [&](auto tag) {
              using T = decltype(tag);
              ew::BinaryWithActivation<T>(ctx, act, [](T a, T b) { return Op{}(a, b); });
            });
          }};
}

// MAXIMUM / MINIMUM as std::max / std::min, i.e. (a < b) ? b : a and
// (b < a) ? b : a: a NaN in a propagates, a NaN in b does not - the answers
// LiteRT.js gives (max(NaN, 1) = NaN, max(1, NaN) = 1). float32 and the
// integer types LiteRT compares raw: int64, int32, int16, int8, uint8
// (quantized tensors are rejected by the interpreter before).
template <typename Op>
Kernel Extremum() {
  return {[](const ir::Subgraph& graph, const ir::Op& op) {
            ew::CheckSameDType(
                graph, op, 2,
                {ew::kF32, ew::kI64, ew::kI32, tfl::TensorType_INT16, tfl::TensorType_INT8, tfl::TensorType_UINT8});
          },
          [](KernelContext& ctx) {
            ew::Dispatch<float, int64_t, int32_t, int16_t, int8_t, uint8_t>(ctx, ctx.input(0).dtype, [&](auto tag) {
              using T = decltype(tag);
              ew::Binary<T, T, T>(ctx, [](T a, T b) { return Op{}(a, b); });
            });
          }};
}

// SQUARED_DIFFERENCE: (a - b)^2; float32 and int32 (integers wrap).
void EvalSquaredDifference(KernelContext& ctx) {
  ew::Dispatch<float, int32_t>(ctx, ctx.input(0).dtype, [&](auto tag) {
    using T = decltype(tag);
    ew::Binary<T, T, T>(ctx, [](T a, T b) {
      const T d = ew::WrapSub(a, b);
      return ew::WrapMul(d, d);
    });
  });
}

}  // namespace

Kernel AddKernel() {
  return Arithmetic<tfl::AddOptionsT, decltype([](auto a, auto b) { return ew::WrapAdd(a, b); })>();
}
Kernel SubKernel() {
  return Arithmetic<tfl::SubOptionsT, decltype([](auto a, auto b) { return ew::WrapSub(a, b); })>();
}
Kernel MulKernel() {
  return Arithmetic<tfl::MulOptionsT, decltype([](auto a, auto b) { return ew::WrapMul(a, b); })>();
}
Kernel MaximumKernel() {
  return Extremum<decltype([](auto a, auto b) { return std::max(a, b); })>();
}
Kernel MinimumKernel() {
  return Extremum<decltype([](auto a, auto b) { return std::min(a, b); })>();
}
Kernel SquaredDifferenceKernel() {
  return {[](const ir::Subgraph& graph, const ir::Op& op) {
            ew::CheckSameDType(graph, op, 2, {ew::kF32, ew::kI32});
          },
          EvalSquaredDifference};
}

}  // namespace gpuclean::exec::kernels
