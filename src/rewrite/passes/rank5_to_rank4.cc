// rank5-to-rank4: the GPU delegates compile no tensor of rank >= 5, yet
// converters emit them wherever a model views its activations as windows,
// heads or groups (Swin/Hiera window partitions, fused-QKV `unbind`,
// deformable-attention sampling tensors, grouped norms). Every op that
// touches such a tensor is computed at rank <= 4 instead, by the rule its
// row in the op table (src/ir/ops.def) declares: the op treats some
// dimensions alike (an elementwise op all of them, a softmax all but the
// last, a transpose those it keeps adjacent and in order), and merging
// dimensions it treats alike keeps every element where it was in row-major
// order. Ops whose merged form still needs five or more dimensions are
// decomposed (a transpose into moves of one block each, a tile or
// broadcast into one step per axis).
//
// The graph is solved as a whole, op by op in topological order, by
// tracking for every rank >= 5 tensor the <= 4-D tensor that holds its
// elements in row-major order: any reshape of that tensor is the same
// value, so each reader asks for the shape its rule wants and gets a
// RESHAPE only where its grouping differs from the one the value has
// (one per distinct shape, shared by readers that agree). RESHAPE,
// SQUEEZE and EXPAND_DIMS of such tensors emit nothing. An op with no rule
// (or whose rule does not fit) keeps its rank-5 form fed by a RESHAPE of
// the tracked value, so one unreducible op costs one op, not its region.
// Pure data movement and the same arithmetic per element: bit-identical.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <optional>
#include <set>

#include "gpuclean/error.h"
#include "gpuclean/op_table.h"
#include "gpuclean/shapes.h"
#include "rewrite/graph_edit.h"
#include "rewrite/passes/passes.h"

namespace gpuclean::rewrite::passes {
namespace {

using Shape = std::vector<int32_t>;
using Runs = std::vector<std::pair<int, int>>;  // [begin, end) axis ranges covering the shape
using ir::RankRule;

int64_t Product(const Shape& s, int begin, int end) {
  int64_t n = 1;
  for (int d = begin; d < end; ++d) n *= s[d];
  return n;
}

int32_t P32(const Shape& s, int begin, int end) { return static_cast<int32_t>(Product(s, begin, end)); }

// Runs that start at 0 and at every axis of `starts` inside (0, n).
Runs RunsFrom(int n, const std::set<int>& starts) {
  Runs runs;
  int begin = 0;
  for (int s : starts)
    if (s > begin && s < n) {
      runs.push_back({begin, s});
      begin = s;
    }
  if (n > 0) runs.push_back({begin, n});
  return runs;
}

Shape Merged(const Shape& s, const Runs& runs) {
  Shape out;
  for (auto [b, e] : runs) out.push_back(P32(s, b, e));
  return out;
}

// `shape` right-aligned to `rank` with leading 1s.
Shape Aligned(const Shape& shape, int rank) {
  Shape out(std::max(0, rank - static_cast<int>(shape.size())), 1);
  out.insert(out.end(), shape.begin(), shape.end());
  return out;
}

Shape WithoutLeadingOnes(Shape s) {
  while (s.size() > 1 && s.front() == 1) s.erase(s.begin());
  return s;
}

// The fewest-axes <= 4-D shape of the same elements that keeps the last
// axis (the one vector units run along): size-1 axes dropped, leading
// axes merged.
Shape Compact(const Shape& s) {
  Shape kept;
  for (int32_t d : s)
    if (d != 1) kept.push_back(d);
  if (kept.empty()) return {1};
  while (kept.size() > 4) {
    kept[1] *= kept[0];
    kept.erase(kept.begin());
  }
  return kept;
}

// Runs where the axes of `full` of size > 1 change pattern; size-1 axes
// join the run before them. `pattern(d)` names what the op does on axis d.
template <typename Pattern>
Runs PatternRuns(const Shape& full, Pattern pattern) {
  std::set<int> starts;
  int previous = -1;
  for (int d = 0; d < static_cast<int>(full.size()); ++d) {
    if (full[d] == 1) continue;
    if (previous >= 0 && pattern(d) != pattern(previous)) starts.insert(d);
    previous = d;
  }
  return RunsFrom(static_cast<int>(full.size()), starts);
}

// An axis view [before, axis, after] with the size-1 outer parts dropped,
// and where the axis landed.
struct AxisView {
  int32_t before = 1, after = 1;
  bool keep_before = false, keep_after = false;
  int axis = 0;
  Shape Of(int32_t axis_size) const {
    Shape s;
    if (keep_before) s.push_back(before);
    s.push_back(axis_size);
    if (keep_after) s.push_back(after);
    return s;
  }
};

AxisView ViewAround(const Shape& s, int axis) {
  AxisView v;
  v.before = P32(s, 0, axis);
  v.after = P32(s, axis + 1, static_cast<int>(s.size()));
  v.keep_before = v.before != 1;
  v.keep_after = v.after != 1;
  v.axis = v.keep_before ? 1 : 0;
  return v;
}

int NormalizeAxis(int64_t axis, int rank) { return static_cast<int>(axis < 0 ? axis + rank : axis); }

// ---------------------------------------------------------------- reducer

class Reducer {
 public:
  explicit Reducer(GraphEdit& edit) : edit_(edit), first_new_(static_cast<int>(edit.graph().tensors.size())) {}

  const ir::Subgraph& g() const { return edit_.graph(); }
  builder::GraphBuilder& b() { return edit_.b(); }
  Shape ShapeOf(int t) const { return g().tensors[t].shape; }
  int Current(int t) const {
    auto it = value_.find(t);
    return it == value_.end() ? t : it->second;
  }
  Shape CurrentShape(int t) const { return ShapeOf(Current(t)); }
  void Set(int t, int value) { value_[t] = value; }
  bool IsNew(int t) const { return t >= first_new_; }

  // The elements of original tensor `t` held as `shape` (row-major order
  // is kept by any reshape): the tracked value itself, a constant re-stored
  // at that shape, or one RESHAPE per distinct shape asked for.
  int Get(int t, const Shape& shape) {
    const int cur = Current(t);
    const ir::Tensor& c = g().tensors[cur];
    if (c.shape == shape) return cur;
    if (Product(shape, 0, static_cast<int>(shape.size())) != c.num_elements())
      ThrowInternal(fmt::format("rank5-to-rank4: '{}' has {} elements, asked for [{}]", c.name, c.num_elements(),
                                fmt::join(shape, ",")));
    const auto key = std::make_pair(t, shape);
    if (auto it = cache_.find(key); it != cache_.end()) return it->second;
    int out;
    if (c.is_const() && !c.sparsity && c.quant.empty()) {
      const ir::Tensor copy = c;
      out = b().Const(fmt::format("{}{}_as_{}", edit_.prefix(), copy.name, fmt::join(shape, "x")), copy.dtype, shape,
                      *copy.data);
    } else {
      out = b().Reshape(cur, shape);
    }
    cache_[key] = out;
    return out;
  }

  // `x` (a tensor of this edit) as `shape`.
  int View(int x, const Shape& shape) { return ShapeOf(x) == shape ? x : b().Reshape(x, shape); }

  // Emits `op` again on `inputs` (its other settings as they were).
  std::vector<int> Emit(const ir::Op& op, std::vector<int> inputs) {
    return b().Op(op.code, std::move(inputs), op.options);
  }
  int Ints(const std::string& role, const Shape& shape, const std::vector<int32_t>& values) {
    return b().ConstI32(fmt::format("{}{}_{}", edit_.prefix(), role, g().tensors.size()), shape, values);
  }

 private:
  GraphEdit& edit_;
  int first_new_;
  std::map<int, int> value_;
  std::map<std::pair<int, Shape>, int> cache_;
};

// One reduced op: the value of each output (any shape of its elements),
// and what the site line says it was computed as.
struct Reduced {
  std::vector<int> outputs;
  Shape computed_at;
  std::string decomposed = {};  // how an op that needs more than 4 axes was split into steps
};

using Outcome = std::optional<Reduced>;

// Each rule: `op` (a copy; the builder appends to the graph) whose tensors
// have rank >= 5 at its rank-4 form, or nullopt with `why` set.
class Rules {
 public:
  explicit Rules(Reducer& r) : r_(r) {}

  Outcome Apply(const ir::Op& op, std::string& why) {
    why.clear();
    switch (ir::TraitsOf(op.code).rank_rule) {
      case RankRule::kPerElement: return PerElement(op, why);
      case RankRule::kBroadcast: return Broadcast(op, why);
      case RankRule::kSameShape: return SameShape(op, why);
      case RankRule::kReshape: return Reshape(op);
      case RankRule::kTranspose: return Transpose(op, why);
      case RankRule::kOneAxis: return OneAxis(op, why);
      case RankRule::kSlice: return Slice(op, why);
      case RankRule::kPad: return Pad(op, why);
      case RankRule::kTile: return Tile(op, why);
      case RankRule::kBroadcastTo: return BroadcastTo(op, why);
      case RankRule::kReduce: return Reduce(op, why);
      case RankRule::kLastAxis: return LastAxis(op, why);
      case RankRule::kBatchMatMul: return BatchMatMul(op, why);
      case RankRule::kFullyConnected: return FullyConnected(op, why);
      case RankRule::kNone: break;
    }
    why = op.code == tfl::BuiltinOperator_GATHER_ND
              ? "GATHER_ND has no rank-4 form here; compute it on the host (split --host gather_nd)"
              : fmt::format("{} has no rank-4 form (its op-table rank rule is 'none')", op.name());
    return std::nullopt;
  }

 private:
  const ir::Subgraph& g() const { return r_.g(); }
  Shape ShapeOf(int t) const { return r_.ShapeOf(t); }
  builder::GraphBuilder& b() { return r_.b(); }

  static Outcome Fail(std::string& why, std::string text) {
    why = std::move(text);
    return std::nullopt;
  }

  // `t`'s elements broadcast (right-aligned) to `full`, one 3-D
  // BROADCAST_TO per run of axes it is broadcast on; any shape of them.
  int Expand(int t, const Shape& full) {
    const int rank = static_cast<int>(full.size());
    Shape cur = Aligned(ShapeOf(t), rank);
    const Runs runs = PatternRuns(full, [&](int d) { return cur[d] == full[d]; });
    int x = -1;
    for (auto [first, end] : runs) {
      if (P32(cur, first, end) == P32(full, first, end)) continue;
      const Shape view = {P32(cur, 0, first), 1, P32(cur, end, rank)};
      x = b().BroadcastTo(x < 0 ? r_.Get(t, view) : r_.View(x, view), {view[0], P32(full, first, end), view[2]});
      for (int d = first; d < end; ++d) cur[d] = full[d];
    }
    return x < 0 ? r_.Get(t, Compact(cur)) : x;
  }

  Outcome PerElement(const ir::Op& op, std::string& why) {
    if (op.inputs.size() != 1 || op.outputs.size() != 1) return Fail(why, "not a one-input elementwise op");
    const int x = op.inputs[0];
    Shape shape = r_.CurrentShape(x);
    if (shape.size() > 4) shape = Compact(shape);
    const int y = r_.Emit(op, {r_.Get(x, shape)}).at(0);
    return Reduced{{y}, shape};
  }

  Outcome SameShape(const ir::Op& op, std::string& why) {
    const Shape out = ShapeOf(op.outputs.at(0));
    for (int in : op.inputs)
      if (in < 0 || ShapeOf(in) != out) return Fail(why, "its operands differ in shape");
    // The layout of the first operand already at rank <= 4, if any.
    Shape shape;
    for (int in : op.inputs)
      if (r_.CurrentShape(in).size() <= 4) {
        shape = r_.CurrentShape(in);
        break;
      }
    if (shape.empty()) shape = Compact(out);
    std::vector<int> inputs;
    for (int in : op.inputs) inputs.push_back(r_.Get(in, shape));
    return Reduced{r_.Emit(op, inputs), shape};
  }

  Outcome Broadcast(const ir::Op& op, std::string& why) {
    if (op.outputs.size() != 1) return Fail(why, "more than one output");
    const Shape full = ShapeOf(op.outputs[0]);
    const int rank = static_cast<int>(full.size());
    bool same = true;
    for (int in : op.inputs) {
      if (in < 0) return Fail(why, "an omitted operand");
      if (ShapeOf(in).size() > full.size()) return Fail(why, "an operand of higher rank than the output");
      same = same && ShapeOf(in) == full;
    }
    if (same) return SameShape(op, why);
    std::vector<Shape> aligned;
    for (int in : op.inputs) aligned.push_back(Aligned(ShapeOf(in), rank));
    // Within a run every operand must be whole or all 1s.
    const Runs runs = PatternRuns(full, [&](int d) {
      std::vector<bool> whole;
      for (const Shape& a : aligned) whole.push_back(a[d] == full[d]);
      return whole;
    });
    std::vector<int> inputs;
    if (runs.size() > 4) {
      // Too many broadcast patterns to merge: broadcast the operands first.
      const Shape compact = Compact(full);
      for (int in : op.inputs) inputs.push_back(r_.View(Expand(in, full), compact));
      return Reduced{r_.Emit(op, inputs), compact,
                     fmt::format("operands broadcast to [{}] first (their patterns leave {} axes)",
                                 fmt::join(full, ","), runs.size())};
    }
    for (size_t k = 0; k < op.inputs.size(); ++k) {
      const int in = op.inputs[k];
      if (g().tensors[in].num_elements() == 1 && r_.CurrentShape(in).size() <= 4) {
        inputs.push_back(r_.Current(in));
        continue;
      }
      inputs.push_back(r_.Get(in, WithoutLeadingOnes(Merged(aligned[k], runs))));
    }
    return Reduced{r_.Emit(op, inputs), Merged(full, runs)};
  }

  Outcome Reshape(const ir::Op& op) {
    // Nothing to compute: the output is the input's elements.
    return Reduced{{r_.Current(op.inputs.at(0))}, r_.CurrentShape(op.inputs[0])};
  }

  Outcome Transpose(const ir::Op& op, std::string& why) {
    if (op.inputs.size() != 2) return Fail(why, "no perm input");
    const std::vector<int64_t> perm64 = ConstInts(g(), op.inputs[1]);
    const Shape dims = ShapeOf(op.inputs[0]);
    const int n = static_cast<int>(dims.size());
    if (static_cast<int>(perm64.size()) != n) return Fail(why, "its perm is not a constant of the input's rank");
    // Axes of size > 1, grouped into blocks that stay adjacent and in order.
    std::vector<int> order;  // kept input axes in output order
    for (int64_t p : perm64)
      if (dims[NormalizeAxis(p, n)] != 1) order.push_back(NormalizeAxis(p, n));
    std::vector<int> position(n, -1);
    for (size_t j = 0; j < order.size(); ++j) position[order[j]] = static_cast<int>(j);
    std::vector<std::vector<int>> blocks;
    for (int axis = 0; axis < n; ++axis) {
      if (dims[axis] == 1) continue;
      if (!blocks.empty() && position[axis] == position[blocks.back().back()] + 1)
        blocks.back().push_back(axis);
      else
        blocks.push_back({axis});
    }
    Shape block_sizes;
    for (const auto& block : blocks) {
      int32_t s = 1;
      for (int axis : block) s *= dims[axis];
      block_sizes.push_back(s);
    }
    // target[j]: the block that goes to output position j.
    std::vector<int> target(blocks.size());
    std::iota(target.begin(), target.end(), 0);
    std::sort(target.begin(), target.end(),
              [&](int x, int y) { return position[blocks[x].front()] < position[blocks[y].front()]; });
    if (block_sizes.empty()) block_sizes = {1};
    if (blocks.size() <= 4) {
      int x = r_.Get(op.inputs[0], block_sizes);
      if (!std::is_sorted(target.begin(), target.end()))
        x = b().Transpose(x, std::vector<int32_t>(target.begin(), target.end()));
      return Reduced{{x}, block_sizes};
    }
    // More than 4 blocks: bring each block to its place in turn, each move
    // a 4-D transpose of [placed, between, block, rest].
    std::vector<int> layout(blocks.size());
    std::iota(layout.begin(), layout.end(), 0);
    auto size_of = [&](size_t begin, size_t end) {
      int32_t s = 1;
      for (size_t i = begin; i < end; ++i) s *= block_sizes[layout[i]];
      return s;
    };
    int moves = 0, x = -1;
    for (size_t j = 0; j < layout.size(); ++j) {
      const size_t i = std::find(layout.begin(), layout.end(), target[j]) - layout.begin();
      if (i == j) continue;
      const Shape view = {size_of(0, j), size_of(j, i), size_of(i, i + 1), size_of(i + 1, layout.size())};
      x = b().Transpose(x < 0 ? r_.Get(op.inputs[0], view) : r_.View(x, view), {0, 2, 1, 3});
      std::rotate(layout.begin() + static_cast<long>(j), layout.begin() + static_cast<long>(i),
                  layout.begin() + static_cast<long>(i) + 1);
      ++moves;
    }
    return Reduced{
        {x}, block_sizes, fmt::format("{} blocks moved into place by {} 4-D transposes", blocks.size(), moves)};
  }

  Outcome OneAxis(const ir::Op& op, std::string& why) {
    const auto code = op.code;
    if (code == tfl::BuiltinOperator_CONCATENATION) {
      const Shape out = ShapeOf(op.outputs.at(0));
      const auto* o = op.options.AsConcatenationOptions();
      if (!o) return Fail(why, "no options");
      const int axis = NormalizeAxis(o->axis, static_cast<int>(out.size()));
      const AxisView v = ViewAround(out, axis);
      std::vector<int> inputs;
      for (int in : op.inputs) inputs.push_back(r_.Get(in, v.Of(ShapeOf(in).at(axis))));
      return Reduced{{b().Concatenation(inputs, v.axis, o->fused_activation_function)}, v.Of(out[axis])};
    }
    if (code == tfl::BuiltinOperator_SPLIT || code == tfl::BuiltinOperator_SPLIT_V ||
        code == tfl::BuiltinOperator_CUMSUM || code == tfl::BuiltinOperator_ARG_MAX ||
        code == tfl::BuiltinOperator_ARG_MIN) {
      const bool split = code == tfl::BuiltinOperator_SPLIT;
      const int x = split ? op.inputs.at(1) : op.inputs.at(0);
      const int axis_tensor = split ? op.inputs.at(0) : op.inputs.at(code == tfl::BuiltinOperator_SPLIT_V ? 2 : 1);
      const std::vector<int64_t> a = ConstInts(g(), axis_tensor);
      if (a.size() != 1) return Fail(why, "its axis is not a one-value constant");
      const Shape in = ShapeOf(x);
      const int axis = NormalizeAxis(a[0], static_cast<int>(in.size()));
      const AxisView v = ViewAround(in, axis);
      const int xv = r_.Get(x, v.Of(in[axis]));
      const int axis_const = r_.Ints("axis", {}, {v.axis});
      std::vector<int> inputs;
      if (split)
        inputs = {axis_const, xv};
      else if (code == tfl::BuiltinOperator_SPLIT_V)
        inputs = {xv, op.inputs[1], axis_const};
      else
        inputs = {xv, axis_const};
      return Reduced{r_.Emit(op, inputs), v.Of(in[axis])};
    }
    if (code == tfl::BuiltinOperator_PACK) {
      const Shape out = ShapeOf(op.outputs.at(0));
      const auto* o = op.options.AsPackOptions();
      if (!o) return Fail(why, "no options");
      const int axis = NormalizeAxis(o->axis, static_cast<int>(out.size()));
      const Shape piece = {P32(out, 0, axis), P32(out, axis + 1, static_cast<int>(out.size()))};
      std::vector<int> inputs;
      for (int in : op.inputs) inputs.push_back(r_.Get(in, piece));
      return Reduced{{b().Pack(inputs, 1)}, {piece[0], out[axis], piece[1]}};
    }
    if (code == tfl::BuiltinOperator_UNPACK) {
      const Shape in = ShapeOf(op.inputs.at(0));
      const auto* o = op.options.AsUnpackOptions();
      if (!o) return Fail(why, "no options");
      const int axis = NormalizeAxis(o->axis, static_cast<int>(in.size()));
      const Shape view = {P32(in, 0, axis), in[axis], P32(in, axis + 1, static_cast<int>(in.size()))};
      return Reduced{b().Unpack(r_.Get(op.inputs[0], view), 1), view};
    }
    if (code == tfl::BuiltinOperator_GATHER) {
      const auto* o = op.options.AsGatherOptions();
      if (!o || o->batch_dims != 0) return Fail(why, "GATHER with batch_dims");
      const Shape params = ShapeOf(op.inputs.at(0));
      const int axis = NormalizeAxis(o->axis, static_cast<int>(params.size()));
      const AxisView v = ViewAround(params, axis);
      const int indices = op.inputs.at(1);
      const int32_t n = static_cast<int32_t>(g().tensors[indices].num_elements());
      const int y = b().Gather(r_.Get(op.inputs[0], v.Of(params[axis])), r_.Get(indices, {n}), v.axis);
      return Reduced{{y}, v.Of(params[axis])};
    }
    return Fail(why, fmt::format("{} has no one-axis form here", op.name()));
  }

  Outcome LastAxis(const ir::Op& op, std::string& why) {
    const int x = op.inputs.at(0);
    const Shape in = ShapeOf(x);
    const Shape cur = r_.CurrentShape(x);
    // The last axis of any reshape that keeps it is the same axis.
    Shape shape = cur.size() <= 4 && !cur.empty() && cur.back() == in.back()
                      ? cur
                      : Shape{P32(in, 0, static_cast<int>(in.size()) - 1), in.back()};
    std::vector<int> inputs = op.inputs;
    inputs[0] = r_.Get(x, shape);
    return Reduced{r_.Emit(op, inputs), shape};
  }

  Outcome Reduce(const ir::Op& op, std::string& why) {
    if (op.inputs.size() != 2) return Fail(why, "no axes input");
    const std::vector<int64_t> axes = ConstInts(g(), op.inputs[1]);
    if (axes.empty()) return Fail(why, "its axes are not a constant");
    const Shape in = ShapeOf(op.inputs[0]);
    const int rank = static_cast<int>(in.size());
    std::vector<bool> reduced(rank, false);
    for (int a : ir::NormalizeAxes(axes, rank, "reduction axes")) reduced[a] = true;
    const Runs runs = PatternRuns(in, [&](int d) { return reduced[d]; });
    if (runs.size() > 4) {
      // One 3-D reduction per run of reduced axes: [before, run, after].
      Shape cur = in;
      int x = -1, steps = 0;
      for (auto [first, end] : runs) {
        bool run_reduced = false;
        for (int d = first; d < end; ++d) run_reduced = run_reduced || (reduced[d] && in[d] != 1);
        if (!run_reduced) continue;
        const Shape view = {P32(cur, 0, first), P32(cur, first, end), P32(cur, end, rank)};
        x = ReduceAxis(op.code, x < 0 ? r_.Get(op.inputs[0], view) : r_.View(x, view), 1);
        for (int d = first; d < end; ++d) cur[d] = 1;
        ++steps;
      }
      return Reduced{{x}, Compact(cur), fmt::format("one 3-D reduction per reduced run ({})", steps)};
    }
    std::vector<int32_t> merged_axes;
    for (size_t r = 0; r < runs.size(); ++r) {
      bool any = false;
      for (int d = runs[r].first; d < runs[r].second; ++d) any = any || (reduced[d] && in[d] != 1);
      if (any) merged_axes.push_back(static_cast<int32_t>(r));
    }
    const Shape merged = Merged(in, runs);
    // Over size-1 axes only, every reduction hands each element back.
    if (merged_axes.empty()) return Reduced{{r_.Current(op.inputs[0])}, r_.CurrentShape(op.inputs[0])};
    tfl::ReducerOptionsT o;
    o.keep_dims = true;  // the merged result with 1s is the original's elements either way
    const int y =
        b().Op(op.code,
               {r_.Get(op.inputs[0], merged), r_.Ints("axes", {static_cast<int32_t>(merged_axes.size())}, merged_axes)},
               builder::Options(o))
            .at(0);
    return Reduced{{y}, merged};
  }

  int ReduceAxis(tfl::BuiltinOperator code, int x, int32_t axis) {
    tfl::ReducerOptionsT o;
    o.keep_dims = true;
    return b().Op(code, {x, r_.Ints("axes", {1}, {axis})}, builder::Options(o)).at(0);
  }

  Outcome Slice(const ir::Op& op, std::string& why) {
    const int x = op.inputs.at(0), x0 = x;
    Shape in;
    std::vector<int32_t> begin, size, stride;
    if (op.code == tfl::BuiltinOperator_SLICE) {
      if (op.inputs.size() != 3) return Fail(why, "no begin/size inputs");
      const std::vector<int64_t> b64 = ConstInts(g(), op.inputs[1]), s64 = ConstInts(g(), op.inputs[2]);
      in = ShapeOf(x);
      if (b64.size() != in.size() || s64.size() != in.size()) return Fail(why, "its begin or size is not constant");
      for (size_t d = 0; d < in.size(); ++d) {
        begin.push_back(static_cast<int32_t>(b64[d]));
        size.push_back(s64[d] < 0 ? in[d] - begin.back() : static_cast<int32_t>(s64[d]));
        stride.push_back(1);
      }
    } else {
      if (op.inputs.size() != 4) return Fail(why, "no begin/end/strides inputs");
      const std::vector<int64_t> b64 = ConstInts(g(), op.inputs[1]), e64 = ConstInts(g(), op.inputs[2]),
                                 s64 = ConstInts(g(), op.inputs[3]);
      const auto* o = op.options.AsStridedSliceOptions();
      if (b64.empty() || !o) return Fail(why, "its begin, end or strides is not constant");
      if (o->offset) return Fail(why, "offset strided slices");
      const ir::StridedSlicePlan plan = ir::PlanStridedSlice(ShapeOf(x), b64, e64, s64, *o);
      in = plan.effective_shape;
      for (size_t d = 0; d < in.size(); ++d) {
        if (plan.stride[d] <= 0) return Fail(why, "a negative stride");
        begin.push_back(plan.begin[d]);
        size.push_back(std::max(0, (plan.end[d] - plan.begin[d] + plan.stride[d] - 1) / plan.stride[d]));
        stride.push_back(plan.stride[d]);
      }
    }
    const int rank = static_cast<int>(in.size());
    std::set<int> starts;
    bool strided = false;
    for (int d = 0; d < rank; ++d) {
      if (size[d] <= 0) return Fail(why, "an empty slice");
      const bool whole = begin[d] == 0 && size[d] == in[d] && stride[d] == 1;
      if (whole) continue;
      starts.insert(d);
      if (stride[d] != 1) {
        starts.insert(d + 1);
        strided = true;
      }
    }
    const Runs runs = RunsFrom(rank, starts);
    if (runs.size() > 4) {
      // One 3-D slice per cut axis: [before, axis, after].
      Shape cur = in;
      int x = -1, steps = 0;
      for (int d = 0; d < rank; ++d) {
        if (begin[d] == 0 && size[d] == in[d] && stride[d] == 1) continue;
        const Shape view = {P32(cur, 0, d), cur[d], P32(cur, d + 1, rank)};
        const int xv = x < 0 ? r_.Get(x0, view) : r_.View(x, view);
        x = stride[d] == 1
                ? b().Slice(xv, {0, begin[d], 0}, {view[0], size[d], view[2]})
                : b().StridedSlice(xv, {0, begin[d], 0}, {view[0], begin[d] + (size[d] - 1) * stride[d] + 1, view[2]},
                                   {1, stride[d], 1});
        cur[d] = size[d];
        ++steps;
      }
      return Reduced{{x}, Compact(cur), fmt::format("one 3-D slice per cut axis ({})", steps)};
    }
    std::vector<int32_t> mb, ms, mst, me;
    for (auto [first, end] : runs) {
      const int32_t rest = P32(in, first + 1, end);
      mb.push_back(begin[first] * rest);
      ms.push_back(size[first] * rest);
      mst.push_back(stride[first]);
      me.push_back(mb.back() + (ms.back() - 1) * mst.back() + 1);
    }
    const int xv = r_.Get(x, Merged(in, runs));
    const int y = strided ? b().StridedSlice(xv, mb, me, mst) : b().Slice(xv, mb, ms);
    return Reduced{{y}, Merged(in, runs)};
  }

  Outcome Pad(const ir::Op& op, std::string& why) {
    if (op.inputs.size() < 2) return Fail(why, "no paddings input");
    const std::vector<int64_t> pads = ConstInts(g(), op.inputs[1]);
    const Shape in = ShapeOf(op.inputs[0]);
    const int rank = static_cast<int>(in.size());
    if (static_cast<int>(pads.size()) != 2 * rank) return Fail(why, "its paddings are not constant");
    std::set<int> starts;
    for (int d = 0; d < rank; ++d)
      if (pads[2 * d] != 0 || pads[2 * d + 1] != 0) starts.insert({d, d + 1});
    const Runs runs = RunsFrom(rank, starts);
    if (runs.size() > 4) {
      // One 3-D pad per padded axis: [before, axis, after].
      Shape cur = in;
      int x = -1, steps = 0;
      for (int d = 0; d < rank; ++d) {
        if (pads[2 * d] == 0 && pads[2 * d + 1] == 0) continue;
        const Shape view = {P32(cur, 0, d), cur[d], P32(cur, d + 1, rank)};
        std::vector<int> inputs = op.inputs;
        inputs[0] = x < 0 ? r_.Get(op.inputs[0], view) : r_.View(x, view);
        inputs[1] = r_.Ints("paddings", {3, 2},
                            {0, 0, static_cast<int32_t>(pads[2 * d]), static_cast<int32_t>(pads[2 * d + 1]), 0, 0});
        x = r_.Emit(op, inputs).at(0);
        cur[d] += static_cast<int32_t>(pads[2 * d] + pads[2 * d + 1]);
        ++steps;
      }
      return Reduced{{x}, Compact(cur), fmt::format("one 3-D pad per padded axis ({})", steps)};
    }
    std::vector<int32_t> merged_pads;
    for (auto [first, end] : runs) {
      const bool padded = end == first + 1 && (pads[2 * first] != 0 || pads[2 * first + 1] != 0);
      merged_pads.push_back(padded ? static_cast<int32_t>(pads[2 * first]) : 0);
      merged_pads.push_back(padded ? static_cast<int32_t>(pads[2 * first + 1]) : 0);
    }
    std::vector<int> inputs = op.inputs;
    inputs[0] = r_.Get(op.inputs[0], Merged(in, runs));
    inputs[1] = r_.Ints("paddings", {static_cast<int32_t>(runs.size()), 2}, merged_pads);
    return Reduced{r_.Emit(op, inputs), Merged(in, runs)};
  }

  Outcome Tile(const ir::Op& op, std::string& why) {
    if (op.inputs.size() != 2) return Fail(why, "no multiples input");
    const std::vector<int64_t> m = ConstInts(g(), op.inputs[1]);
    Shape cur = ShapeOf(op.inputs[0]);
    const int rank = static_cast<int>(cur.size());
    if (static_cast<int>(m.size()) != rank) return Fail(why, "its multiples are not constant");
    std::set<int> starts;
    for (int d = 0; d < rank; ++d)
      if (m[d] != 1) starts.insert(d);
    const Runs runs = RunsFrom(rank, starts);
    if (runs.size() <= 4) {
      std::vector<int32_t> mm;
      for (auto [first, end] : runs) mm.push_back(static_cast<int32_t>(m[first]));
      const int y = b().Tile(r_.Get(op.inputs[0], Merged(cur, runs)), mm);
      return Reduced{{y}, Merged(cur, runs)};
    }
    // One 2-D tile per tiled axis: [before, axis and after] repeated on the second.
    int x = r_.Get(op.inputs[0], Compact(cur));
    for (int d = 0; d < rank; ++d) {
      if (m[d] == 1) continue;
      x = b().Tile(r_.View(x, {P32(cur, 0, d), P32(cur, d, rank)}), {1, static_cast<int32_t>(m[d])});
      cur[d] *= static_cast<int32_t>(m[d]);
    }
    return Reduced{{x}, Compact(cur), fmt::format("one 2-D TILE per tiled axis ({})", starts.size())};
  }

  Outcome BroadcastTo(const ir::Op& op, std::string& why) {
    const Shape out = ShapeOf(op.outputs.at(0));
    const int rank = static_cast<int>(out.size());
    const Shape in = Aligned(ShapeOf(op.inputs.at(0)), rank);
    if (static_cast<int>(in.size()) != rank) return Fail(why, "an input of higher rank than the output");
    const Runs runs = PatternRuns(out, [&](int d) { return in[d] == out[d]; });
    if (runs.size() <= 4) {
      const int y = b().BroadcastTo(r_.Get(op.inputs[0], Merged(in, runs)), Merged(out, runs));
      return Reduced{{y}, Merged(out, runs)};
    }
    return Reduced{{Expand(op.inputs[0], out)},
                   Compact(out),
                   fmt::format("one 3-D BROADCAST_TO per broadcast run ({} runs)", runs.size())};
  }

  Outcome BatchMatMul(const ir::Op& op, std::string& why) {
    if (op.inputs.size() != 2) return Fail(why, "not two operands");
    const Shape out = ShapeOf(op.outputs.at(0));
    const int rank = static_cast<int>(out.size());
    const Shape a = ShapeOf(op.inputs[0]), bb = ShapeOf(op.inputs[1]);
    if (a.size() < 2 || bb.size() < 2) return Fail(why, "an operand below rank 2");
    const int batch = rank - 2;
    const Shape full(out.begin(), out.begin() + batch);
    const Shape ab = Aligned(Shape(a.begin(), a.end() - 2), batch),
                bbb = Aligned(Shape(bb.begin(), bb.end() - 2), batch);
    const Runs runs = PatternRuns(full, [&](int d) { return std::make_pair(ab[d] == full[d], bbb[d] == full[d]); });
    if (runs.size() > 2) {
      // Broadcast both operands' batch axes first: then they merge into one.
      auto expanded = [&](int t, const Shape& whole) {
        Shape target = full;
        target.push_back(whole[whole.size() - 2]);
        target.push_back(whole.back());
        return r_.View(Expand(t, target), {P32(full, 0, batch), target[batch], target[batch + 1]});
      };
      const int y = r_.Emit(op, {expanded(op.inputs[0], a), expanded(op.inputs[1], bb)}).at(0);
      return Reduced{{y},
                     r_.ShapeOf(y),
                     fmt::format("batch axes [{}] broadcast first ({} patterns)", fmt::join(full, ","), runs.size())};
    }
    auto form = [&](const Shape& batch_shape, const Shape& whole) {
      Shape s = WithoutLeadingOnes(Merged(batch_shape, runs));
      if (s.size() == 1 && s[0] == 1) s.clear();
      s.push_back(whole[whole.size() - 2]);
      s.push_back(whole.back());
      return s;
    };
    const Shape fa = form(ab, a), fb = form(bbb, bb);
    const int y = r_.Emit(op, {r_.Get(op.inputs[0], fa), r_.Get(op.inputs[1], fb)}).at(0);
    return Reduced{{y}, r_.ShapeOf(y)};
  }

  Outcome FullyConnected(const ir::Op& op, std::string& why) {
    const Shape in = ShapeOf(op.inputs.at(0));
    const auto* o = op.options.AsFullyConnectedOptions();
    if (!o) return Fail(why, "no options");
    if (op.inputs.size() < 2 || ShapeOf(op.inputs[1]).size() != 2) return Fail(why, "its weights are not 2-D");
    const int32_t k = ShapeOf(op.inputs[1])[1];
    if (in.back() != k) return Fail(why, "its input's last axis is not the weights' depth");
    tfl::FullyConnectedOptionsT options = *o;
    options.keep_num_dims = false;
    std::vector<int> inputs = op.inputs;
    inputs[0] = r_.Get(op.inputs[0], {static_cast<int32_t>(g().tensors[op.inputs[0]].num_elements() / k), k});
    const int y = b().Op(op.code, inputs, builder::Options(options)).at(0);
    return Reduced{{y}, r_.ShapeOf(y)};
  }

  Reducer& r_;
};

bool AboveRank4(const ir::Subgraph& g, const ir::Op& op) {
  for (const auto* list : {&op.inputs, &op.outputs})
    for (int t : *list)
      if (t >= 0 && g.tensors[t].rank() > 4) return true;
  return false;
}

// Why an op is left at its rank before any rule is tried, or empty.
std::string Unfit(const ir::Subgraph& g, const ir::Op& op) {
  for (const auto* list : {&op.inputs, &op.outputs})
    for (int t : *list) {
      if (t < 0) continue;
      const ir::Tensor& tensor = g.tensors[t];
      if (tensor.is_dynamic()) return fmt::format("'{}' has a dynamic dimension", tensor.name);
      if (!tensor.quant.empty() && tensor.rank() > 4) return fmt::format("'{}' is quantized", tensor.name);
      if (tensor.num_elements() == 0) return fmt::format("'{}' is empty", tensor.name);
    }
  return {};
}

int CountAboveRank4(const ir::Subgraph& g) {
  int n = 0;
  for (const ir::Tensor& t : g.tensors) n += t.rank() > 4;
  return n;
}

class Rank5ToRank4Pass final : public Pass {
 public:
  std::string_view id() const override { return "rank5-to-rank4"; }
  Exactness exactness() const override { return Exactness::kExact; }
  std::string_view contract() const override {
    return "every op with a tensor of rank >= 5 whose op-table rank rule fits is computed at rank <= 4 by merging "
           "the dimensions it treats alike (a transpose, tile or broadcast that needs more is decomposed into "
           "<= 4-D steps); values move between ops as reshapes of the same row-major elements; graph inputs "
           "and outputs keep their rank";
  }

  PassResult Apply(ir::Model& model, const PassOptions&) const override {
    PassResult result;
    if (CountAboveRank4(model.main()) == 0) return result;
    ir::Model work = model;
    {
      GraphEdit edit(work, std::string(id()));
      Reducer reducer(edit);
      Rules rules(reducer);
      const std::vector<int> order = edit.graph().TopologicalOrder();
      std::vector<std::pair<int, std::vector<int>>> reduced;  // op, its outputs' original tensors
      for (int node : order) {
        const ir::Op op = edit.graph().ops[node];
        if (!AboveRank4(edit.graph(), op)) continue;
        std::string why = Unfit(edit.graph(), op);
        Outcome outcome;
        if (why.empty()) outcome = rules.Apply(op, why);
        if (outcome && outcome->outputs.size() == op.outputs.size()) {
          for (size_t k = 0; k < op.outputs.size(); ++k) reducer.Set(op.outputs[k], outcome->outputs[k]);
          reduced.push_back({node, op.outputs});
          // A reshape into rank >= 5 computes nothing; the one back out is a site.
          if (ir::TraitsOf(op.code).rank_rule != RankRule::kReshape || edit.graph().tensors[op.outputs[0]].rank() <= 4)
            result.sites.push_back({node, op.name(), SiteLine(edit.graph(), op, *outcome)});
          continue;
        }
        // Left at its rank, fed the tracked values at their original shapes.
        std::vector<int> inputs = op.inputs;
        for (int& in : inputs)
          if (in >= 0) in = reducer.Get(in, edit.graph().tensors[in].shape);
        edit.mutable_graph().ops[node].inputs = inputs;
        result.skipped.push_back({node, op.name(), TensorNames(edit.graph(), op), why});
      }
      // Ops whose outputs leave the rank >= 5 world (or are graph outputs)
      // are replaced by the value at the output's own shape.
      std::set<int> used;
      for (const auto& [node, outputs] : reduced) {
        bool needed = false;
        for (int t : outputs) needed = needed || edit.graph().tensors[t].rank() <= 4 || edit.graph().IsGraphOutput(t);
        if (!needed) continue;
        std::vector<int> replacements;
        for (int t : outputs) {
          const Shape shape = edit.graph().tensors[t].shape;
          int rep = reducer.Get(t, shape);
          // A value that is an original tensor or already hands over another
          // output gets a RESHAPE of its own: each replacement needs a
          // producer of its own in this edit.
          if (!reducer.IsNew(rep) || used.count(rep) || edit.graph().Producer(rep) < 0)
            rep = edit.b().Reshape(rep, shape);
          used.insert(rep);
          replacements.push_back(rep);
          if (edit.graph().tensors[t].rank() > 4 && edit.graph().IsGraphOutput(t))
            result.skipped.push_back({node,
                                      edit.graph().ops[node].name(),
                                      {edit.graph().tensors[t].name},
                                      fmt::format("'{}' is a graph output of rank {}: it keeps its shape, computed "
                                                  "at rank <= 4 and reshaped at the end",
                                                  edit.graph().tensors[t].name, edit.graph().tensors[t].rank())});
        }
        edit.Replace(node, replacements);
      }
      for (int t : edit.graph().inputs)
        if (edit.graph().tensors[t].rank() > 4)
          result.skipped.push_back({-1,
                                    "INPUT",
                                    {edit.graph().tensors[t].name},
                                    fmt::format("graph input '{}' has rank {}: its first reshape stays",
                                                edit.graph().tensors[t].name, edit.graph().tensors[t].rank())});
      edit.Commit();
    }
    if (result.sites.empty() || CountAboveRank4(work.main()) >= CountAboveRank4(model.main())) {
      result.sites.clear();
      return result;
    }
    model = std::move(work);
    return result;
  }

 private:
  static std::string SiteLine(const ir::Subgraph& g, const ir::Op& op, const Reduced& r) {
    int rank = 0;
    Shape widest;
    for (const auto* list : {&op.inputs, &op.outputs})
      for (int t : *list)
        if (t >= 0 && g.tensors[t].rank() > rank) {
          rank = g.tensors[t].rank();
          widest = g.tensors[t].shape;
        }
    if (!r.decomposed.empty())
      return fmt::format("rank-{} {} over [{}] -> {}", rank, op.name(), fmt::join(widest, ","), r.decomposed);
    return fmt::format("rank-{} {} over [{}] -> computed at [{}]", rank, op.name(), fmt::join(widest, ","),
                       fmt::join(r.computed_at, ","));
  }
  static std::vector<std::string> TensorNames(const ir::Subgraph& g, const ir::Op& op) {
    std::vector<std::string> names;
    for (const auto* list : {&op.inputs, &op.outputs})
      for (int t : *list)
        if (t >= 0 && g.tensors[t].rank() > 4) names.push_back(g.tensors[t].name);
    return names;
  }
};

}  // namespace

const Pass& Rank5ToRank4() {
  static const Rank5ToRank4Pass pass;
  return pass;
}

}  // namespace gpuclean::rewrite::passes
