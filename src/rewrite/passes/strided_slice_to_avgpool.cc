// strided-slice-to-avgpool: a stride-s subsample of H/W -> AVERAGE_POOL_2D
// with a 1x1 filter and stride s (after a SLICE when the subsample starts
// off the origin or stops early). A 1x1 average is its single element, so
// the values are copied unchanged (exact).
//
// Converters also emit the subsample as GATHER_ND with constant indices, which
// the GPU delegates reject. Indices that form a regular grid (one arithmetic
// progression per indexed dimension, in row-major order) are the strided
// slice they spell; those become the pool form on 4-D float H/W, and a
// STRIDED_SLICE otherwise.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gpuclean/shapes.h"
#include "rewrite/passes/passes.h"
#include "rewrite/pattern_pass.h"

namespace gpuclean::rewrite::passes {
namespace {

// Elements begin, begin + stride, ... (count of them) along each dimension.
struct Box {
  std::vector<int32_t> begin, count, stride;
};

// Whether `box` over a tensor of `shape` is a pure H/W subsample of a 4-D
// float tensor that a pool can take.
bool PoolTakes(const ir::Tensor& x, const Box& box) {
  if (x.rank() != 4 || x.dtype != tfl::TensorType_FLOAT32) return false;
  for (int d : {0, 3})
    if (box.begin[d] != 0 || box.count[d] != x.shape[d] || box.stride[d] != 1) return false;
  return box.stride[1] > 1 || box.stride[2] > 1;
}

int EmitPool(GraphEdit& edit, int x, const Box& box) {
  const std::vector<int32_t> shape = edit.graph().tensors[x].shape;
  // A VALID 1x1 pool over n rows yields (n - 1) / stride + 1 of them; trim
  // the map (to end at the last sampled row) only where that is not count.
  auto pooled = [&](int d) { return (shape[d] - 1) / box.stride[d] + 1; };
  const int32_t span_h = (box.count[1] - 1) * box.stride[1] + 1, span_w = (box.count[2] - 1) * box.stride[2] + 1;
  int u = x;
  if (box.begin[1] || box.begin[2] || pooled(1) != box.count[1] || pooled(2) != box.count[2])
    u = edit.b().Slice(x, {0, box.begin[1], box.begin[2], 0}, {shape[0], span_h, span_w, shape[3]});
  return edit.b().AveragePool2D(u, tfl::Padding_VALID, box.stride[2], box.stride[1], 1, 1);
}

// GATHER_ND indices [n_0, ..., n_{K-1}, K] whose entry (j_0..j_{K-1}) is
// (b_0 + j_0 s_0, ..., b_{K-1} + j_{K-1} s_{K-1}), within the params shape.
std::optional<Box> RegularGrid(const ir::Subgraph& g, int params, int indices) {
  const std::vector<int32_t>& ps = g.tensors[params].shape;
  const std::vector<int32_t>& is = g.tensors[indices].shape;
  const std::vector<int64_t> idx = ConstInts(g, indices);
  if (is.size() < 2 || idx.empty()) return std::nullopt;
  const int k = is.back();
  if (k < 1 || k > static_cast<int>(ps.size()) || static_cast<int>(is.size()) != k + 1) return std::nullopt;
  Box box;
  for (int d = 0; d < k; ++d) {
    if (is[d] < 1) return std::nullopt;
    // Element (0,..,0) and the next one along d fix b_d and s_d.
    int64_t step_offset = k;
    for (int e = k - 1; e > d; --e) step_offset *= is[e];
    const int64_t b = idx[d];
    const int64_t s = is[d] > 1 ? idx[step_offset + d] - b : 1;
    if (b < 0 || s < 1 || b + (is[d] - 1) * s >= ps[d]) return std::nullopt;
    box.begin.push_back(static_cast<int32_t>(b));
    box.count.push_back(is[d]);
    box.stride.push_back(static_cast<int32_t>(s));
  }
  // Every entry must follow the grid, not just the ones that set it.
  std::vector<int32_t> j(k, 0);
  for (size_t e = 0; e < idx.size(); e += k) {
    for (int d = 0; d < k; ++d)
      if (idx[e + d] != box.begin[d] + static_cast<int64_t>(j[d]) * box.stride[d]) return std::nullopt;
    for (int d = k - 1; d >= 0 && ++j[d] == is[d]; --d) j[d] = 0;
  }
  for (size_t d = k; d < ps.size(); ++d) {
    box.begin.push_back(0);
    box.count.push_back(ps[d]);
    box.stride.push_back(1);
  }
  return box;
}

// The elements the op selects, and whether a pool can take them (else a
// STRIDED_SLICE, for GATHER_ND only).
struct Subsample {
  Box box;
  bool pool = false;
};

class StridedSliceToAvgPoolPass final : public PatternPass<Subsample> {
 public:
  StridedSliceToAvgPoolPass()
      : PatternPass({"strided-slice-to-avgpool", Exactness::kExact,
                     "4-D float STRIDED_SLICE with positive strides > 1 only on H/W, full N and C, no shrink/new-axis; "
                     "or GATHER_ND whose constant indices form a regular grid; the same elements are selected"},
                    {tfl::BuiltinOperator_STRIDED_SLICE, tfl::BuiltinOperator_GATHER_ND}) {}

 private:
  std::optional<Subsample> Match(const OpSite& site) const override {
    const ir::Op& op = site.op;
    if (op.outputs.size() != 1 || op.inputs.empty()) return std::nullopt;
    const ir::Subgraph& g = site.graph();
    const int x = op.inputs[0];
    if (op.code == tfl::BuiltinOperator_STRIDED_SLICE) {
      std::optional<Box> box = SliceBox(g, op);
      if (!box || !PoolTakes(g.tensors[x], *box)) return std::nullopt;
      return Subsample{std::move(*box), true};
    }
    if (op.inputs.size() != 2) return std::nullopt;
    std::optional<Box> box = RegularGrid(g, x, op.inputs[1]);
    if (!box || g.tensors[op.outputs[0]].shape != box->count) return std::nullopt;
    const bool pool = PoolTakes(g.tensors[x], *box);
    return Subsample{std::move(*box), pool};
  }

  std::string Rewrite(OpSite& site, const Subsample& found) const override {
    const int x = site.op.inputs[0];
    const Box& box = found.box;
    int y = -1;
    std::string what;
    if (found.pool) {
      y = EmitPool(site.edit, x, box);
      what = PoolWhat(box);
    } else {
      std::vector<int32_t> end;
      for (size_t d = 0; d < box.begin.size(); ++d)
        end.push_back(box.begin[d] + (box.count[d] - 1) * box.stride[d] + 1);
      y = site.b().StridedSlice(x, box.begin, end, box.stride);
      what = fmt::format("STRIDED_SLICE with strides [{}]", fmt::join(box.stride, ", "));
    }
    site.edit.Replace(site.node, {y});
    return what;
  }

 private:
  static std::string PoolWhat(const Box& box) {
    return fmt::format("AVERAGE_POOL_2D 1x1 stride {}x{}", box.stride[1], box.stride[2]);
  }

  static std::optional<Box> SliceBox(const ir::Subgraph& g, const ir::Op& op) {
    const auto* o = op.options.AsStridedSliceOptions();
    if (op.inputs.size() != 4 || !o || o->ellipsis_mask || o->new_axis_mask || o->shrink_axis_mask) return std::nullopt;
    const ir::Tensor& x = g.tensors[op.inputs[0]];
    if (x.is_dynamic()) return std::nullopt;
    const std::vector<int64_t> begin = ConstInts(g, op.inputs[1]), end = ConstInts(g, op.inputs[2]),
                               strides = ConstInts(g, op.inputs[3]);
    if (begin.size() != x.shape.size() || end.size() != begin.size() || strides.size() != begin.size())
      return std::nullopt;
    for (int64_t s : strides)
      if (s < 1) return std::nullopt;
    const ir::StridedSlicePlan plan = ir::PlanStridedSlice(x.shape, begin, end, strides, *o);
    if (plan.output_shape != g.tensors[op.outputs[0]].shape) return std::nullopt;
    Box box;
    for (size_t d = 0; d < plan.begin.size(); ++d) {
      if (plan.output_shape[d] < 1) return std::nullopt;
      box.begin.push_back(plan.begin[d]);
      box.count.push_back(plan.output_shape[d]);
      box.stride.push_back(plan.stride[d]);
    }
    return box;
  }
};

}  // namespace

const Pass& StridedSliceToAvgPool() {
  static const StridedSliceToAvgPoolPass pass;
  return pass;
}

}  // namespace gpuclean::rewrite::passes
