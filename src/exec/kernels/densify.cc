// DENSIFY: expands a sparse constant (ir::Tensor::sparsity, TACO-style
// traversal_order / block_map / dim_metadata with DENSE and SPARSE_CSR levels)
// into its dense form, zeros elsewhere. The constant's data holds only the
// stored values, in traversal order. Follows LiteRT's FormatConverter
// (sparsity_format_converter.cc): levels are walked in traversal order, a
// DENSE level of size s maps a parent position p to p * s + i, a SPARSE_CSR
// level visits array_indices[segments[p] .. segments[p+1]) and passes the
// position in array_indices down; each leaf consumes the next stored value.
// Block sizes are read the way LiteRT reads them. Dtype-agnostic (float32,
// float16, int8... are all just bytes).
#include "exec/kernels/layout_util.h"

namespace gpuclean::exec::kernels {
namespace {

void CheckDensify(const ir::Subgraph& graph, const ir::Op& op) {
  RequireInputCount(graph, op, 1, 1);
  const ir::Tensor* in = IrInput(graph, op, 0);
  if (!in) ThrowOpUnsupported(graph, op, "input 0 is missing");
  if (!in->sparsity) ThrowOpUnsupported(graph, op, "input '{}' has no sparsity parameters", in->name);
  if (!in->is_const()) ThrowOpUnsupported(graph, op, "input '{}' is not a constant", in->name);
  if (ir::DTypeSize(in->dtype) == 0) ThrowUnsupportedDtype(graph, op, in->dtype);
  RequireOutputDtype(graph, op, 0, {in->dtype});
}

std::vector<int64_t> IndexVector(const tfl::SparseIndexVectorUnion& u) {
  std::vector<int64_t> v;
  switch (u.type) {
    case tfl::SparseIndexVector_Int32Vector:
      if (const auto* p = u.AsInt32Vector()) v.assign(p->values.begin(), p->values.end());
      break;
    case tfl::SparseIndexVector_Uint16Vector:
      if (const auto* p = u.AsUint16Vector()) v.assign(p->values.begin(), p->values.end());
      break;
    case tfl::SparseIndexVector_Uint8Vector:
      if (const auto* p = u.AsUint8Vector()) v.assign(p->values.begin(), p->values.end());
      break;
    default: break;
  }
  return v;
}

struct Densifier {
  explicit Densifier(const KernelContext& c) : ctx(c) {}
  const KernelContext& ctx;
  std::vector<int32_t> dense_shape;
  std::vector<int32_t> traversal;
  std::vector<int32_t> block_map;
  std::vector<bool> sparse;         // per level
  std::vector<int64_t> level_size;  // dense_size per level
  std::vector<std::vector<int64_t>> segments, indices;
  std::vector<int64_t> block_size;
  const uint8_t* src = nullptr;
  int64_t stored = 0;
  int64_t next = 0;
  uint8_t* dst = nullptr;
  size_t esize = 0;
  int64_t dense_total = 0;
  std::vector<int64_t> coord;  // per level

  void Leaf() {
    const size_t n = dense_shape.size();
    std::vector<int64_t> orig(n, 0);
    size_t i = 0;
    for (; i < n; ++i) orig[traversal[i]] = coord[i];
    for (; i < coord.size(); ++i) {
      const size_t b = static_cast<size_t>(traversal[i]) - n;
      orig[block_map[b]] = orig[block_map[b]] * block_size[b] + coord[i];
    }
    int64_t flat = 0;
    for (size_t d = 0; d < n; ++d) {
      if (orig[d] < 0 || orig[d] >= dense_shape[d])
        ThrowOpBadInput(ctx, "sparse index {} of dimension {} is outside [0, {})", orig[d], d, dense_shape[d]);
      flat = flat * dense_shape[d] + orig[d];
    }
    if (next >= stored) ThrowOpBadInput(ctx, "the sparse tensor stores {} values but its indices address more", stored);
    std::memcpy(dst + flat * esize, src + next * esize, esize);
    ++next;
  }

  void Walk(size_t level, int64_t parent) {
    if (level == coord.size()) {
      Leaf();
      return;
    }
    if (!sparse[level]) {
      const int64_t s = level_size[level];
      for (int64_t i = 0; i < s; ++i) {
        coord[level] = i;
        Walk(level + 1, parent * s + i);
      }
      return;
    }
    const auto& seg = segments[level];
    const auto& idx = indices[level];
    if (parent < 0 || parent + 1 >= static_cast<int64_t>(seg.size())) return;  // as LiteRT: nothing stored here
    for (int64_t i = seg[parent]; i < seg[parent + 1]; ++i) {
      if (i < 0 || i >= static_cast<int64_t>(idx.size())) continue;
      coord[level] = idx[i];
      Walk(level + 1, i);
    }
  }
};

void EvalDensify(KernelContext& ctx) {
  const ir::Tensor& ir_in = *IrInput(ctx.graph, ctx.op, 0);
  const tfl::SparsityParametersT& sp = *ir_in.sparsity;
  const Tensor& input = ctx.input(0);
  Tensor& output = ctx.output(0);

  Densifier d(ctx);
  d.dense_shape = output.shape;
  d.traversal = sp.traversal_order;
  d.block_map = sp.block_map;
  const size_t n = d.dense_shape.size();
  const size_t k = d.block_map.size();
  const size_t levels = d.traversal.size();
  if (levels != n + k)
    ThrowOpBadInput(ctx, "traversal_order has {} entries for rank {} with {} block dimensions", levels, n, k);
  if (sp.dim_metadata.size() != levels)
    ThrowOpBadInput(ctx, "dim_metadata has {} entries, traversal_order {}", sp.dim_metadata.size(), levels);
  for (size_t i = 0; i < levels; ++i) {
    const int32_t t = d.traversal[i];
    if (t < 0 || t >= static_cast<int32_t>(levels) || (i < n && t >= static_cast<int32_t>(n)) ||
        (i >= n && t < static_cast<int32_t>(n)))
      ThrowOpBadInput(ctx, "traversal_order[{}] = {} is not supported", i, t);
  }
  for (int32_t b : d.block_map)
    if (b < 0 || b >= static_cast<int32_t>(n)) ThrowOpBadInput(ctx, "block_map entry {} is out of range", b);
  for (size_t l = 0; l < levels; ++l) {
    const tfl::DimensionMetadataT* m = sp.dim_metadata[l].get();
    if (!m) ThrowOpBadInput(ctx, "dim_metadata[{}] is missing", l);
    d.sparse.push_back(m->format == tfl::DimensionType_SPARSE_CSR);
    d.level_size.push_back(m->dense_size);
    d.segments.push_back(d.sparse.back() ? IndexVector(m->array_segments) : std::vector<int64_t>{});
    d.indices.push_back(d.sparse.back() ? IndexVector(m->array_indices) : std::vector<int64_t>{});
  }
  // Block sizes, as LiteRT's converter reads them: block b (in block_map
  // order, matched against the dimensions in increasing order) takes the
  // dense_size of dim_metadata[traversal_order[rank + b]].
  d.block_size.assign(k, 1);
  for (size_t i = 0, b = 0; i < n; ++i) {
    if (b < k && d.block_map[b] == static_cast<int32_t>(i)) {
      const int32_t entry = d.traversal[n + b];
      if (entry < 0 || entry >= static_cast<int32_t>(levels)) ThrowOpBadInput(ctx, "block {} has no size", b);
      d.block_size[b] = d.level_size[entry];
      if (d.block_size[b] <= 0) ThrowOpBadInput(ctx, "block {} has size {}", b, d.block_size[b]);
      ++b;
    }
  }
  d.esize = ElementSize(output);
  d.src = input.data;
  d.stored = static_cast<int64_t>(input.bytes / d.esize);
  d.dst = output.data;
  d.dense_total = output.num_elements();
  d.coord.assign(levels, 0);
  std::memset(output.data, 0, output.bytes);
  if (d.dense_total == 0) return;
  d.Walk(0, 0);
}

}  // namespace

Kernel DensifyKernel() { return {CheckDensify, EvalDensify}; }

}  // namespace gpuclean::exec::kernels
