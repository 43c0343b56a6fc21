// GatherElements and GatherND (batch_dims 0) -> GATHER_ND. GatherElements
// addresses every element: its coordinates are the position itself on every
// axis but `axis`, where the index is; constant indices give constant
// coordinates, run-time ones a CONCATENATION of constant position grids and
// the (wrapped) indices. Negative indices count from the end. NonZero of a
// constant is folded; of a run-time tensor it is refused (data-dependent
// shape). (Compress lives in shape_ops.cc.)
#include <algorithm>

#include <fmt/format.h>

#include "onnx/ops/ops.h"

namespace gpuclean::onnx::ops {
namespace {

// idx < 0 ? idx + size : idx, for int32 run-time indices (size broadcast).
int Wrap(NodeContext& ctx, int idx, int size) {
  auto& b = ctx.b();
  if (b.tensor(idx).dtype != tfl::TensorType_INT32) idx = b.Cast(idx, tfl::TensorType_INT32);
  return b.SelectV2(b.Less(idx, ctx.ConstI32({}, {0})), b.Add(idx, size), idx);
}

void GatherElements(NodeContext& ctx) {
  const Dims& data = ctx.Shape(0);
  const Dims& ishape = ctx.Shape(1);
  const int rank = static_cast<int>(data.size());
  if (static_cast<int>(ishape.size()) != rank) ctx.BadModel("indices and data differ in rank");
  const int axis = NormalizeAxis(ctx.Int("axis", 0), rank, ctx.node().Label());
  const int64_t n = NumElements(ishape);
  auto& b = ctx.b();
  Dims coord_shape = ishape;
  coord_shape.push_back(rank);
  // Position of element e along dimension d.
  auto position = [&](int64_t e, int d) {
    int64_t stride = 1;
    for (int j = rank - 1; j > d; --j) stride *= ishape[j];
    return (e / stride) % ishape[d];
  };
  if (ctx.IsConst(1)) {
    const auto idx = ctx.ConstInts(1);
    std::vector<int32_t> coords(static_cast<size_t>(n * rank));
    for (int64_t e = 0; e < n; ++e)
      for (int d = 0; d < rank; ++d) {
        int64_t v = d == axis ? idx[e] : position(e, d);
        if (d == axis) {
          if (v < -data[axis] || v >= data[axis]) ctx.BadModel(fmt::format("index {} out of range", v));
          if (v < 0) v += data[axis];
        }
        coords[e * rank + d] = static_cast<int32_t>(v);
      }
    ctx.Out(0, b.GatherNd(ctx.Tensor(0), ctx.ConstI32(coord_shape, coords)));
    return;
  }
  Dims one = ishape;
  one.push_back(1);
  std::vector<int> parts;
  for (int d = 0; d < rank; ++d) {
    if (d == axis) {
      const int idx = Wrap(ctx, ctx.Tensor(1), ctx.ConstI32({}, {static_cast<int32_t>(data[axis])}));
      parts.push_back(b.Reshape(idx, ToShape32(one)));
      continue;
    }
    std::vector<int32_t> pos(n);
    for (int64_t e = 0; e < n; ++e) pos[e] = static_cast<int32_t>(position(e, d));
    parts.push_back(ctx.ConstI32(one, pos));
  }
  ctx.Out(0, b.GatherNd(ctx.Tensor(0), b.Concatenation(parts, rank)));
}

void GatherND(NodeContext& ctx) {
  if (ctx.Int("batch_dims", 0) != 0) ctx.Fail("batch_dims > 0 is not supported");
  const Dims& data = ctx.Shape(0);
  const Dims& ishape = ctx.Shape(1);
  if (ishape.empty()) ctx.BadModel("indices must have rank >= 1");
  const int64_t depth = ishape.back();
  if (depth < 1 || depth > static_cast<int64_t>(data.size())) ctx.BadModel("index depth outside 1..rank");
  auto& b = ctx.b();
  if (ctx.IsConst(1)) {
    auto idx = ctx.ConstInts(1);
    std::vector<int32_t> i32(idx.size());
    for (size_t e = 0; e < idx.size(); ++e) {
      const int64_t dim = data[e % depth];
      int64_t v = idx[e];
      if (v < -dim || v >= dim) ctx.BadModel(fmt::format("index {} out of range", v));
      i32[e] = static_cast<int32_t>(v < 0 ? v + dim : v);
    }
    ctx.Out(0, b.GatherNd(ctx.Tensor(0), ctx.ConstI32(ishape, i32)));
    return;
  }
  std::vector<int32_t> sizes(data.begin(), data.begin() + depth);
  const int idx = Wrap(ctx, ctx.Tensor(1), ctx.ConstI32({depth}, sizes));
  ctx.Out(0, b.GatherNd(ctx.Tensor(0), idx));
}

// NonZero of a constant (folded at convert time); of a run-time input, the
// padded form data_dependent.cc lowers.
void NonZero(NodeContext& ctx) {
  if (!ctx.IsConst(0)) return LowerNonZeroPadded(ctx);
  const npy::Array& a = ctx.Const(0);
  const Dims& shape = ctx.Shape(0);
  const int rank = static_cast<int>(shape.size());
  const size_t esize = ir::DTypeSize(a.dtype);
  std::vector<int64_t> hits;
  const int64_t n = NumElements(shape);
  for (int64_t e = 0; e < n; ++e) {
    bool nonzero = false;
    if (a.dtype == tfl::TensorType_FLOAT32) {
      nonzero = a.as<float>()[e] != 0.0f;
    } else {
      for (size_t k = 0; k < esize; ++k) nonzero = nonzero || a.data[e * esize + k] != 0;
    }
    if (nonzero) hits.push_back(e);
  }
  const int64_t count = static_cast<int64_t>(hits.size());
  if (count == 0) ctx.Fail("no element is non-zero; empty tensors are not supported");
  npy::Array out;
  out.dtype = tfl::TensorType_INT64;
  out.shape = {std::max(rank, 1), count};
  out.data.resize(static_cast<size_t>(out.shape[0] * count) * 8);
  int64_t* o = reinterpret_cast<int64_t*>(out.data.data());
  for (int64_t h = 0; h < count; ++h) {
    int64_t rest = hits[h];
    for (int d = rank - 1; d >= 0; --d) {
      o[d * count + h] = rest % shape[d];
      rest /= shape[d];
    }
    if (rank == 0) o[h] = 0;
  }
  ctx.OutConst(0, std::move(out));
}

}  // namespace

void RegisterGatherNd(Registry& r) {
  r.Add("GatherElements", GatherElements);
  r.Add("GatherND", GatherND);
  r.Add("NonZero", NonZero);
}

}  // namespace gpuclean::onnx::ops
