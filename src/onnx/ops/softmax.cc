// Softmax / LogSoftmax over any axis: TFLite normalises the last axis, so
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

}  // namespace

void RegisterSoftmax(Registry& r) {
  r.Add("Softmax", [](NodeContext& c) { SoftmaxFamily(c, false); });
  r.Add("LogSoftmax", [](NodeContext& c) { SoftmaxFamily(c, true); });
}

}  // namespace gpuclean::onnx::ops
