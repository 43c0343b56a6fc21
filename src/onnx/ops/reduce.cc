// The Reduce* family and ArgMax/ArgMin, in the input's layout with the axes
// remapped.
#include <algorithm>

#include "onnx/ops/ops.h"

namespace gpuclean::onnx::ops {
namespace {

enum class Kind { kMean, kSum, kMax, kMin, kProd, kL1, kL2, kSumSquare, kLogSum, kLogSumExp };

void Reduce(NodeContext& ctx, Kind kind) {
  const int rank = ctx.Rank(0);
  std::vector<int64_t> axes = ctx.Has(1) ? ctx.ConstInts(1) : ctx.Ints("axes", {});
  const bool keep = ctx.Int("keepdims", 1) != 0;
  const Perm perm = ctx.PermOf(0);
  auto& b = ctx.b();
  int x = ctx.TensorIn(0, perm);
  if (axes.empty()) {
    if (ctx.Int("noop_with_empty_axes", 0)) {
      ctx.Out(0, b.Reshape(x, b.shape(x)), perm);
      return;
    }
    for (int a = 0; a < rank; ++a) axes.push_back(a);
  }
  std::vector<bool> reduced(rank, false);
  std::vector<int32_t> stored_axes;
  for (int64_t a : axes) {
    const int ax = NormalizeAxis(a, rank, ctx.node().Label());
    if (reduced[ax]) continue;
    reduced[ax] = true;
    stored_axes.push_back(StoredAxis(perm, ax));
  }
  std::sort(stored_axes.begin(), stored_axes.end());
  if (kind == Kind::kL1) x = b.Abs(x);
  if (kind == Kind::kL2 || kind == Kind::kSumSquare) x = b.Mul(x, x);
  int lse_max = -1;
  if (kind == Kind::kLogSumExp) {
    lse_max = b.ReduceMax(x, stored_axes, true);
    x = b.Exp(b.Sub(x, lse_max));
  }
  tfl::BuiltinOperator code = tfl::BuiltinOperator_SUM;
  if (kind == Kind::kMean) code = tfl::BuiltinOperator_MEAN;
  if (kind == Kind::kMax) code = tfl::BuiltinOperator_REDUCE_MAX;
  if (kind == Kind::kMin) code = tfl::BuiltinOperator_REDUCE_MIN;
  if (kind == Kind::kProd) code = tfl::BuiltinOperator_REDUCE_PROD;
  int y = b.Reduce(code, x, stored_axes, true);
  if (kind == Kind::kL2) y = b.Sqrt(y);
  if (kind == Kind::kLogSum) y = b.Log(y);
  if (kind == Kind::kLogSumExp) y = b.Add(b.Log(y), lse_max);
  if (keep) {
    ctx.Out(0, y, perm);
    return;
  }
  // Dropping the reduced axes: the remaining ones keep their stored order.
  const Perm p = perm.empty() ? IdentityPerm(rank) : perm;
  Perm out_perm;
  Shape32 stored;
  for (int i = 0; i < rank; ++i) {
    if (reduced[p[i]]) continue;
    int shift = 0;
    for (int a = 0; a < p[i]; ++a) shift += reduced[a];
    out_perm.push_back(p[i] - shift);
    stored.push_back(static_cast<int32_t>(ctx.Shape(0)[p[i]]));
  }
  ctx.Out(0, b.Reshape(y, stored), IsIdentity(out_perm) ? Perm{} : out_perm);
}

void Arg(NodeContext& ctx, bool max) {
  const int rank = ctx.Rank(0);
  const int axis = NormalizeAxis(ctx.Int("axis", 0), rank, ctx.node().Label());
  auto& b = ctx.b();
  int x = ctx.Tensor(0);
  const bool last = ctx.Int("select_last_index", 0) != 0;
  const int32_t n = static_cast<int32_t>(ctx.Shape(0)[axis]);
  if (last) {
    // The last extreme is the first one of the input reversed along the
    // axis: index n - 1 - i there.
    std::vector<int32_t> begin(rank, 0), end(rank), stride(rank, 1);
    for (int i = 0; i < rank; ++i) end[i] = static_cast<int32_t>(ctx.Shape(0)[i]);
    begin[axis] = n - 1;
    end[axis] = 0;
    stride[axis] = -1;
    builder::StridedSliceMasks masks;
    masks.end = 1 << axis;
    x = b.StridedSlice(x, begin, end, stride, masks);
  }
  int y = max ? b.ArgMax(x, axis) : b.ArgMin(x, axis);
  if (last) y = b.Sub(ctx.ConstI32({}, {n - 1}), y);
  if (ctx.Int("keepdims", 1)) {
    Dims shape = ctx.Shape(0);
    shape[axis] = 1;
    y = b.Reshape(y, ToShape32(shape));
  }
  ctx.Out(0, y);
}

}  // namespace

void RegisterReduce(Registry& r) {
  r.Add("ReduceMean", [](NodeContext& c) { Reduce(c, Kind::kMean); });
  r.Add("ReduceSum", [](NodeContext& c) { Reduce(c, Kind::kSum); });
  r.Add("ReduceMax", [](NodeContext& c) { Reduce(c, Kind::kMax); });
  r.Add("ReduceMin", [](NodeContext& c) { Reduce(c, Kind::kMin); });
  r.Add("ReduceProd", [](NodeContext& c) { Reduce(c, Kind::kProd); });
  r.Add("ReduceL1", [](NodeContext& c) { Reduce(c, Kind::kL1); });
  r.Add("ReduceL2", [](NodeContext& c) { Reduce(c, Kind::kL2); });
  r.Add("ReduceSumSquare", [](NodeContext& c) { Reduce(c, Kind::kSumSquare); });
  r.Add("ReduceLogSum", [](NodeContext& c) { Reduce(c, Kind::kLogSum); });
  r.Add("ReduceLogSumExp", [](NodeContext& c) { Reduce(c, Kind::kLogSumExp); });
  r.Add("ArgMax", [](NodeContext& c) { Arg(c, true); });
  r.Add("ArgMin", [](NodeContext& c) { Arg(c, false); });
}

}  // namespace gpuclean::onnx::ops
