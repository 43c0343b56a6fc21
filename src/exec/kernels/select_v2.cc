// SELECT_V2: condition ? x : y with numpy broadcasting of all three inputs.
// Element types as in LiteRT: bool, float32, uint8, int8, int16, int32, int64.
#include "exec/kernels/elementwise_util.h"

namespace gpuclean::exec::kernels {
namespace {

void EvalSelectV2(KernelContext& ctx) {
  ew::DispatchBySize(ctx, ctx.input(1).dtype, [&](auto tag) {
    using U = decltype(tag);
    ew::Ternary<uint8_t, U, U, U>(ctx, [](uint8_t c, U a, U b) { return c ? a : b; });
  });
}

}  // namespace

Kernel SelectV2Kernel() { return {ew::CheckSelect, EvalSelectV2}; }

}  // namespace gpuclean::exec::kernels
