// SELECT (TF1 Select): condition ? x : y. x and y have one shape; the
// condition has that shape too, or is a scalar (picks all of x or all of y),
// or is a vector along x's first dimension (picks whole rows). Shape
// inference has already rejected any other combination. Element types as in
// LiteRT: bool, float32, uint8, int8, int16, int32, int64.
#include "exec/kernels/elementwise_util.h"

namespace gpuclean::exec::kernels {
namespace {

void EvalSelect(KernelContext& ctx) {
  const Tensor& x = ctx.input(1);
  Tensor cond = ctx.input(0);
  if (cond.rank() == 1 && x.rank() > 1 && cond.shape != x.shape) {
    // A vector along the first dimension: view it as [n, 1, ..., 1].
    cond.shape.resize(x.rank(), 1);
  }
  ew::DispatchBySize(ctx, x.dtype, [&](auto tag) {
    using U = decltype(tag);
    ew::Ternary<uint8_t, U, U, U>(ctx.pool, cond, x, ctx.input(2), ctx.output(0),
                                  [](uint8_t c, U a, U b) { return c ? a : b; });
  });
}

}  // namespace

Kernel SelectKernel() { return {ew::CheckSelect, EvalSelect}; }

}  // namespace gpuclean::exec::kernels
