// Softmax / LogSoftmax (and Hardmax) over any axis: TFLite normalises the last axis, so
// the input is read in a layout with the ONNX axis last (no op when it
// already is) and the output keeps that layout.
#include "onnx/ops/ops.h"

namespace gpuclean::onnx::ops {
namespace {

void SoftmaxFamily(NodeContext& ctx, bool log) {
  const int rank = ctx.Rank(0);
  const int axis = NormalizeAxis(ctx.Int("axis", -1), rank, ctx.node().Label());
  Perm layout = ctx.PermOf(0).empty() ? IdentityPerm(rank) : ctx.PermOf(0);
  layout.erase(std::find(layout.begin(), layout.end(), axis));
  layout.push_back(axis);
  const int x = ctx.TensorIn(0, layout);
  ctx.Out(0, log ? ctx.b().LogSoftmax(x) : ctx.b().Softmax(x), layout);
}

// Hardmax: 1 at the first maximum along the axis, 0 elsewhere - ARG_MAX
// compared with the positions along the axis.
void Hardmax(NodeContext& ctx) {
  auto& b = ctx.b();
  const int rank = ctx.Rank(0);
  const int axis = NormalizeAxis(ctx.Int("axis", -1), rank, ctx.node().Label());
  const int x = ctx.Tensor(0);
  Dims kept = ctx.Shape(0);
  const int32_t n = static_cast<int32_t>(kept[axis]);
  kept[axis] = 1;
  const int arg = b.Reshape(b.ArgMax(x, axis), ToShape32(kept));
  Dims iota_shape(rank, 1);
  iota_shape[axis] = n;
  std::vector<int32_t> iota(n);
  for (int32_t i = 0; i < n; ++i) iota[i] = i;
  ctx.Out(0, b.Cast(b.Equal(arg, ctx.ConstI32(iota_shape, iota)), tfl::TensorType_FLOAT32));
}

}  // namespace

void RegisterSoftmax(Registry& r) {
  r.Add("Softmax", [](NodeContext& c) { SoftmaxFamily(c, false); });
  r.Add("LogSoftmax", [](NodeContext& c) { SoftmaxFamily(c, true); });
  r.Add("Hardmax", Hardmax);
}

}  // namespace gpuclean::onnx::ops
