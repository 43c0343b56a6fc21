// CumSum (axis a constant; exclusive, reverse) -> CUMSUM along the stored
// axis, in the input's layout.
#include "onnx/ops/ops.h"

namespace gpuclean::onnx::ops {
namespace {

void CumSum(NodeContext& ctx) {
  const int rank = ctx.Rank(0);
  ctx.Const(1);  // the axis: Fail()s naming it when computed at run time
  const int axis = NormalizeAxis(ctx.ConstInts(1).at(0), rank, ctx.node().Label());
  const Perm perm = ctx.PermOf(0);
  const int x = ctx.TensorIn(0, perm);
  ctx.Out(0, ctx.b().Cumsum(x, StoredAxis(perm, axis), ctx.Int("exclusive", 0) != 0, ctx.Int("reverse", 0) != 0), perm);
}

}  // namespace

void RegisterCumSum(Registry& r) { r.Add("CumSum", CumSum); }

}  // namespace gpuclean::onnx::ops
