// TopK (k a constant) -> TOPK_V2 along the stored innermost axis: when the
// ONNX axis is not innermost in the stored layout, one TRANSPOSE moves it
// there and the outputs keep that layout (no transpose back). largest=0
// negates in and out (float). Indices come out int32 (ONNX int64, stored
// int32). TOPK_V2 orders ties by lower index first, as onnxruntime does.
#include <fmt/format.h>

#include "onnx/ops/ops.h"

namespace gpuclean::onnx::ops {
namespace {

void TopK(NodeContext& ctx) {
  const int rank = ctx.Rank(0);
  if (rank < 1) ctx.BadModel("TopK of a scalar");
  const int axis = NormalizeAxis(ctx.Int("axis", -1), rank, ctx.node().Label());
  ctx.Const(1);  // k: Fail()s naming it when computed at run time
  const int64_t k = ctx.ConstInts(1).at(0);
  if (k < 1 || k > ctx.Shape(0)[axis]) ctx.Fail(fmt::format("k = {} outside 1..{}", k, ctx.Shape(0)[axis]));
  const bool largest = ctx.Int("largest", 1) != 0;
  auto& b = ctx.b();
  Perm perm = ctx.PermOf(0);
  if (perm.empty()) perm = IdentityPerm(rank);
  int x = ctx.TensorIn(0, IsIdentity(perm) ? Perm{} : perm);
  const int s = StoredAxis(perm, axis);
  if (s != rank - 1) {
    std::vector<int32_t> q;
    for (int i = 0; i < rank; ++i)
      if (i != s) q.push_back(i);
    q.push_back(s);
    x = b.Transpose(x, q);
    Perm moved(rank);
    for (int i = 0; i < rank; ++i) moved[i] = perm[q[i]];
    perm = moved;
  }
  const auto dtype = b.tensor(x).dtype;
  if (!largest && dtype != tfl::TensorType_FLOAT32) ctx.Fail("largest=0 is only supported for float tensors");
  if (!largest) x = b.Neg(x);
  auto [values, indices] = b.TopKV2(x, static_cast<int32_t>(k));
  if (!largest) values = b.Neg(values);
  const Perm out = IsIdentity(perm) ? Perm{} : perm;
  ctx.Out(0, values, out);
  ctx.Out(1, indices, out);
}

}  // namespace

void RegisterTopK(Registry& r) { r.Add("TopK", TopK); }

}  // namespace gpuclean::onnx::ops
