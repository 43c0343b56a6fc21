// OneHot (run-time indices; depth and values constants): EQUAL of the
// indices against a constant range along the new axis, then SELECT_V2
// (exact). Hardmax lives in softmax.cc.
#include <fmt/format.h>

#include "onnx/ops/ops.h"

namespace gpuclean::onnx::ops {
namespace {

// Range 0..n-1 shaped to broadcast along `axis` of a rank-`rank` tensor.
int RangeAlong(NodeContext& ctx, int64_t n, int axis, int rank) {
  Dims shape(rank, 1);
  shape[axis] = n;
  std::vector<int32_t> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<int32_t>(i);
  return ctx.ConstI32(shape, v);
}

void OneHot(NodeContext& ctx) {
  const Dims& in = ctx.Shape(0);
  const int rank = static_cast<int>(in.size()) + 1;
  const int axis = NormalizeAxis(ctx.Int("axis", -1), rank, ctx.node().Label());
  ctx.Const(1);  // depth and values: Fail() naming them when computed at run time
  ctx.Const(2);
  const npy::Array& dc = ctx.Const(1);
  const int64_t depth =
      dc.dtype == tfl::TensorType_FLOAT32 ? static_cast<int64_t>(ctx.ConstFloats(1).at(0)) : ctx.ConstInts(1).at(0);
  if (depth < 1) ctx.BadModel("depth must be >= 1");
  auto& b = ctx.b();
  int idx = ctx.Tensor(0);
  if (b.tensor(idx).dtype == tfl::TensorType_FLOAT32)
    idx = b.Cast(b.Floor(idx), tfl::TensorType_INT32);
  else if (b.tensor(idx).dtype != tfl::TensorType_INT32)
    idx = b.Cast(idx, tfl::TensorType_INT32);
  // Negative indices count from the end.
  const int d = ctx.ConstI32({}, {static_cast<int32_t>(depth)});
  idx = b.SelectV2(b.Less(idx, ctx.ConstI32({}, {0})), b.Add(idx, d), idx);
  Dims expanded = in;
  expanded.insert(expanded.begin() + axis, 1);
  idx = b.Reshape(idx, ToShape32(expanded));
  const int hot = b.Equal(idx, RangeAlong(ctx, depth, axis, rank));
  int off, on;
  if (ctx.DType(2) == tfl::TensorType_FLOAT32) {
    const auto v = ctx.ConstFloats(2);
    off = ctx.ScalarF32(v.at(0));
    on = ctx.ScalarF32(v.at(1));
  } else {
    const auto v = ctx.ConstInts(2);
    off = ctx.ConstI32({}, {static_cast<int32_t>(v.at(0))});
    on = ctx.ConstI32({}, {static_cast<int32_t>(v.at(1))});
  }
  ctx.Out(0, b.SelectV2(hot, on, off));
}

}  // namespace

void RegisterOneHot(Registry& r) { r.Add("OneHot", OneHot); }

}  // namespace gpuclean::onnx::ops
