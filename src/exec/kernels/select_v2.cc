// SELECT_V2: condition ? x : y with numpy broadcasting of all three inputs.
// Element types as in LiteRT: bool, float32, uint8, int8, int16, int32, int64.
#include "exec/kernels/elementwise_util.h"

namespace gpuclean::exec::kernels {
namespace {

void Check(const ir::Subgraph& graph, const ir::Op& op) {
  ew::RequireCounts(graph, op, 3, 1);
  ew::RequireInputDType(graph, op, 0, {ew::kBool});
  ew::RequireInputDType(graph, op, 1,
                        {ew::kBool, ew::kF32, tfl::TensorType_UINT8, tfl::TensorType_INT8, tfl::TensorType_INT16,
                         ew::kI32, ew::kI64});
  const ir::DType d = ew::InputDType(graph, op, 1);
  if (ew::InputDType(graph, op, 2) != d || ew::OutputDType(graph, op, 0) != d)
    ThrowBadInput(fmt::format("{}: x, y and the output must have one dtype, got {}, {} and {}", ew::Label(graph, op),
                              ir::DTypeName(d), ir::DTypeName(ew::InputDType(graph, op, 2)),
                              ir::DTypeName(ew::OutputDType(graph, op, 0))));
}

void Eval(KernelContext& ctx) {
  ew::DispatchBySize(ctx, ctx.input(1).dtype, [&](auto tag) {
    using U = decltype(tag);
    ew::Ternary<uint8_t, U, U, U>(ctx, [](uint8_t c, U a, U b) { return c ? a : b; });
  });
}

}  // namespace

Kernel SelectV2Kernel() { return {Check, Eval}; }

}  // namespace gpuclean::exec::kernels
