// rank5-to-rank4: RESHAPE / TRANSPOSE chains through rank >= 5 tensors (6-D
// window partition, 5-D head split, pixel shuffle) fail to compile on the
// GPU. A chain  a (<= 4-D) -> RESHAPE D -> TRANSPOSE P -> RESHAPE b (<= 4-D)
// moves the same elements as one with D's size-1 axes dropped and every run
// of axes that stays adjacent and in order under P merged into one; when
// that leaves <= 4 axes the chain is re-emitted that way. Elementwise unary
// ops on the chain commute with data movement and are applied to `a`.
// Pure data movement, so bit-identical. Chains with two or more transposes,
// or that need more than 4 axes after merging, are left alone.
//
// Islands: RESHAPEs from <= 4-D into rank R >= 5, elementwise ops (unary,
// or binary with broadcasting) on those tensors, and RESHAPEs back to <= 4-D
// (converters emit them for grouped norms, head-wise scales, einops). An
// elementwise op does not care how its elements are laid out, so the island
// can run at any rank whose axes are runs of R's adjacent axes, provided
// every operand (broadcast constants, <= 4-D runtime operands right-aligned
// to R) is, within each run, either full or all 1s: then merging the run
// keeps each operand's row-major order and its broadcast. Runs are chosen
// greedily (maximal), which gives the fewest axes; when that is <= 4 every
// tensor is re-emitted at the merged shape (constants re-stored, nothing
// else changes). Same elements, same arithmetic: bit-identical.
//
// An island may also hold SLICEs with constant begin/size (the q/k/v picks
// of a fused QKV head split, [B,N,3,H,D] sliced on the 3): a run may start
// at a sliced axis and go on over axes the slice keeps whole, which is one
// contiguous range of the merged axis, so each sliced axis starts a run.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <optional>
#include <set>

#include "rewrite/graph_edit.h"
#include "rewrite/passes/passes.h"

namespace gpuclean::rewrite::passes {
namespace {

// Unary ops without options that act per element: they commute with any
// reshape or transpose.
bool IsPlainUnary(tfl::BuiltinOperator code) {
  switch (code) {
    case tfl::BuiltinOperator_RELU:
    case tfl::BuiltinOperator_RELU6:
    case tfl::BuiltinOperator_RELU_N1_TO_1:
    case tfl::BuiltinOperator_LOGISTIC:
    case tfl::BuiltinOperator_TANH:
    case tfl::BuiltinOperator_ABS:
    case tfl::BuiltinOperator_NEG:
    case tfl::BuiltinOperator_EXP:
    case tfl::BuiltinOperator_SQRT:
    case tfl::BuiltinOperator_RSQRT:
    case tfl::BuiltinOperator_SQUARE:
    case tfl::BuiltinOperator_HARD_SWISH:
      return true;
    default:
      return false;
  }
}

struct Chain {
  int first = -1, last = -1;                  // op indices
  int a = -1;                                 // the <= 4-D input
  std::vector<tfl::BuiltinOperator> unary;    // applied to a, in order
  std::vector<int32_t> dims;                  // the transpose's input shape (empty: no transpose)
  std::vector<int32_t> perm;
  std::vector<int32_t> out;                   // b's shape
};

// Follows the chain that starts at RESHAPE `node` into rank >= 5.
std::optional<Chain> Follow(const ir::Subgraph& g, int node) {
  const ir::Op& first = g.ops[node];
  if (first.code != tfl::BuiltinOperator_RESHAPE || first.inputs.empty() || first.outputs.size() != 1)
    return std::nullopt;
  Chain c;
  c.first = node;
  c.a = first.inputs[0];
  if (c.a < 0 || g.tensors[c.a].rank() > 4 || g.tensors[first.outputs[0]].rank() < 5) return std::nullopt;
  int t = first.outputs[0];
  while (g.tensors[t].rank() >= 5) {
    for (int32_t d : g.tensors[t].shape_signature)
      if (d < 0) return std::nullopt;
    const int next = SoleConsumer(g, t);
    if (next < 0) return std::nullopt;
    const ir::Op& op = g.ops[next];
    if (op.inputs.empty() || op.inputs[0] != t || op.outputs.size() != 1) return std::nullopt;
    if (op.code == tfl::BuiltinOperator_TRANSPOSE) {
      if (!c.dims.empty() || op.inputs.size() != 2) return std::nullopt;
      const std::vector<int64_t> perm = ConstInts(g, op.inputs[1]);
      if (perm.size() != g.tensors[t].shape.size()) return std::nullopt;
      c.dims = g.tensors[t].shape;
      c.perm.assign(perm.begin(), perm.end());
    } else if (op.code == tfl::BuiltinOperator_RESHAPE) {
      // composes with its neighbours: only the shapes matter
    } else if (IsPlainUnary(op.code) && op.inputs.size() == 1) {
      if (g.tensors[op.outputs[0]].dtype != g.tensors[t].dtype) return std::nullopt;
      c.unary.push_back(op.code);
    } else {
      return std::nullopt;
    }
    c.last = next;
    t = op.outputs[0];
  }
  if (c.last < 0) return std::nullopt;
  c.out = g.tensors[t].shape;
  return c;
}

// D and P with size-1 axes dropped and adjacent-in-order runs merged.
std::pair<std::vector<int32_t>, std::vector<int32_t>> Merge(const std::vector<int32_t>& dims,
                                                            const std::vector<int32_t>& perm) {
  std::vector<int32_t> kept;  // input axes of size > 1
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] != 1) kept.push_back(static_cast<int32_t>(i));
  std::vector<int32_t> order;  // kept axes in output order
  for (int32_t p : perm)
    if (dims[p] != 1) order.push_back(p);
  std::vector<int> position(dims.size(), -1);
  for (size_t j = 0; j < order.size(); ++j) position[order[j]] = static_cast<int>(j);
  // Groups of consecutive kept input axes whose output positions follow on.
  std::vector<std::vector<int32_t>> groups;
  for (int32_t axis : kept) {
    if (!groups.empty() && position[axis] == position[groups.back().back()] + 1) groups.back().push_back(axis);
    else groups.push_back({axis});
  }
  std::vector<int32_t> merged_dims;
  for (const auto& group : groups) {
    int32_t n = 1;
    for (int32_t axis : group) n *= dims[axis];
    merged_dims.push_back(n);
  }
  std::vector<int32_t> by_output(groups.size());
  std::iota(by_output.begin(), by_output.end(), 0);
  std::sort(by_output.begin(), by_output.end(),
            [&](int32_t x, int32_t y) { return position[groups[x].front()] < position[groups[y].front()]; });
  return {merged_dims, by_output};
}

bool IsIdentity(const std::vector<int32_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int32_t>(i)) return false;
  return true;
}

// Elementwise ops an island may hold: per element, with the usual
// broadcasting between operands; options (fused activations) carry over.
bool IsIslandUnary(tfl::BuiltinOperator code) {
  switch (code) {
    case tfl::BuiltinOperator_LOG:
    case tfl::BuiltinOperator_SIN:
    case tfl::BuiltinOperator_COS:
    case tfl::BuiltinOperator_FLOOR:
    case tfl::BuiltinOperator_CEIL:
    case tfl::BuiltinOperator_ELU:
    case tfl::BuiltinOperator_LEAKY_RELU:
    case tfl::BuiltinOperator_GELU:
    case tfl::BuiltinOperator_RELU_0_TO_1:
      return true;
    default:
      return IsPlainUnary(code);
  }
}

bool IsIslandBinary(tfl::BuiltinOperator code) {
  return IsBinaryElementwise(code) || code == tfl::BuiltinOperator_PRELU;
}

bool IsRank5Reshape(const ir::Subgraph& g, const ir::Op& op) {
  return op.code == tfl::BuiltinOperator_RESHAPE && !op.inputs.empty() && op.inputs[0] >= 0 &&
         op.outputs.size() == 1 && g.tensors[op.inputs[0]].rank() <= 4 && g.tensors[op.outputs[0]].rank() >= 5;
}

// A SLICE with constant begin and size whose input has rank >= 5.
bool IsIslandSlice(const ir::Subgraph& g, const ir::Op& op) {
  return op.code == tfl::BuiltinOperator_SLICE && op.inputs.size() == 3 && op.outputs.size() == 1 &&
         op.inputs[0] >= 0 && g.tensors[op.inputs[0]].rank() >= 5 && IsConstantValued(g, op.inputs[1]) &&
         IsConstantValued(g, op.inputs[2]);
}

// A SLICE's begin and (resolved, never -1) size per axis.
struct SliceWindow {
  std::vector<int32_t> begin, size;
};

SliceWindow Window(const ir::Subgraph& g, const ir::Op& slice) {
  const std::vector<int32_t>& in = g.tensors[slice.inputs[0]].shape;
  const std::vector<int64_t> begin = ConstInts(g, slice.inputs[1]), size = ConstInts(g, slice.inputs[2]);
  SliceWindow w;
  for (size_t d = 0; d < in.size(); ++d) {
    const int32_t b = d < begin.size() ? static_cast<int32_t>(begin[d]) : 0;
    const int32_t n = d < size.size() && size[d] >= 0 ? static_cast<int32_t>(size[d]) : in[d] - b;
    w.begin.push_back(b);
    w.size.push_back(n);
  }
  return w;
}

struct Island {
  std::vector<int> entries;  // RESHAPE ops from <= 4-D into the island
  std::vector<int> ops;      // elementwise ops, in graph order
  std::vector<int> exits;    // RESHAPE ops from the island back to <= 4-D
  std::set<int> tensors;     // the island's rank-R tensors
  std::set<int> operands;    // other inputs of its ops: constants and <= 4-D runtime tensors
  std::vector<int32_t> full;  // broadcast of every island tensor's shape
  std::set<int> cuts;         // axes a SLICE cuts: each starts a run
  std::string failure;        // why it cannot be rewritten; empty when it can
};

// Collects the island around the rank >= 5 output of RESHAPE `entry`.
Island Collect(const ir::Subgraph& g, const std::vector<std::vector<int>>& consumers, int entry) {
  Island is;
  const int rank = g.tensors[g.ops[entry].outputs[0]].rank();
  std::set<int> ops, entries, exits;
  std::vector<int> work = {g.ops[entry].outputs[0]};
  auto fail = [&](std::string why) {
    if (is.failure.empty()) is.failure = std::move(why);
  };
  while (!work.empty() && is.failure.empty()) {
    const int t = work.back();
    work.pop_back();
    if (!is.tensors.insert(t).second) continue;
    const ir::Tensor& tensor = g.tensors[t];
    if (tensor.rank() != rank) fail(fmt::format("'{}' has rank {}, the island rank {}", tensor.name, tensor.rank(), rank));
    if (tensor.dtype != tfl::TensorType_FLOAT32) fail(fmt::format("'{}' is not float32", tensor.name));
    if (tensor.is_dynamic()) fail(fmt::format("'{}' has a dynamic dimension", tensor.name));
    if (g.IsGraphOutput(t)) fail(fmt::format("'{}' is a graph output", tensor.name));
    const int producer = g.Producer(t);
    if (producer < 0) {
      fail(fmt::format("'{}' is a graph input or constant", tensor.name));
      continue;
    }
    const ir::Op& p = g.ops[producer];
    // The producer: an entry RESHAPE or an island op (whose inputs are visited).
    if (IsRank5Reshape(g, p)) {
      entries.insert(producer);
    } else if (IsIslandSlice(g, p)) {
      if (ops.insert(producer).second) work.push_back(p.inputs[0]);
    } else if ((IsIslandUnary(p.code) && p.inputs.size() == 1) || (IsIslandBinary(p.code) && p.inputs.size() == 2)) {
      if (ops.insert(producer).second)
        for (int in : p.inputs) {
          if (in < 0) continue;
          if (IsConstantValued(g, in) || g.tensors[in].rank() < 5) is.operands.insert(in);
          else work.push_back(in);
        }
    } else {
      fail(fmt::format("'{}' comes from {}, not a RESHAPE from <= 4-D, an elementwise op or a constant SLICE", tensor.name,
                       p.name()));
    }
    // Every reader: an island op (its output joins) or an exit RESHAPE.
    for (int c : consumers[t]) {
      const ir::Op& op = g.ops[c];
      if (op.code == tfl::BuiltinOperator_RESHAPE && op.inputs[0] == t && op.outputs.size() == 1 &&
          g.tensors[op.outputs[0]].rank() <= 4) {
        exits.insert(c);
      } else if ((IsIslandSlice(g, op) && op.inputs[0] == t) ||
                 (((IsIslandUnary(op.code) && op.inputs.size() == 1) || (IsIslandBinary(op.code) && op.inputs.size() == 2)) &&
                  op.outputs.size() == 1)) {
        work.push_back(op.outputs[0]);
      } else {
        fail(fmt::format("'{}' is read by {}, which is neither elementwise, a constant SLICE nor a RESHAPE back to <= 4-D",
                         tensor.name, op.name()));
      }
    }
  }
  if (!is.failure.empty()) return is;
  is.entries.assign(entries.begin(), entries.end());
  is.ops.assign(ops.begin(), ops.end());
  is.exits.assign(exits.begin(), exits.end());
  is.full.assign(rank, 1);
  for (int t : is.tensors)
    for (int d = 0; d < rank; ++d) is.full[d] = std::max(is.full[d], g.tensors[t].shape[d]);
  for (int t : is.operands)
    if (g.tensors[t].rank() > rank) fail(fmt::format("operand '{}' has a higher rank", g.tensors[t].name));
  for (int node : is.ops) {
    const ir::Op& op = g.ops[node];
    if (op.code != tfl::BuiltinOperator_SLICE) continue;
    const std::vector<int32_t>& in = g.tensors[op.inputs[0]].shape;
    if (in != is.full) fail(fmt::format("SLICE '{}' reads a broadcast-shaped tensor", g.tensors[op.outputs[0]].name));
    const SliceWindow w = Window(g, op);
    for (int d = 0; d < rank; ++d)
      if (w.size[d] != in[d]) is.cuts.insert(d);
  }
  return is;
}

// `shape` right-aligned to `rank` with leading 1s.
std::vector<int32_t> Aligned(const std::vector<int32_t>& shape, int rank) {
  std::vector<int32_t> out(rank - shape.size(), 1);
  out.insert(out.end(), shape.begin(), shape.end());
  return out;
}

// Runs of adjacent axes [begin, end) to merge, or empty when some operand's
// broadcast pattern leaves more than 4.
std::vector<std::pair<int, int>> MergeRuns(const std::vector<int32_t>& full,
                                           const std::vector<std::vector<int32_t>>& shapes, const std::set<int>& cuts) {
  // An axis of `full` size 1 joins any run; others join when every shape is
  // full there exactly where it is full on the run so far.
  auto same_pattern = [&](int a, int b) {
    for (const auto& s : shapes)
      if ((s[a] == full[a]) != (s[b] == full[b])) return false;
    return true;
  };
  std::vector<std::pair<int, int>> runs;
  int anchor = -1;  // an axis of size > 1 in the current run
  for (int d = 0; d < static_cast<int>(full.size()); ++d) {
    if (runs.empty()) {
      runs.push_back({d, d + 1});
    } else if (!cuts.count(d) && (full[d] == 1 || anchor < 0 || same_pattern(anchor, d))) {
      runs.back().second = d + 1;
    } else {
      runs.push_back({d, d + 1});
      anchor = -1;
    }
    if (full[d] != 1 && anchor < 0) anchor = d;
  }
  return runs;
}

std::vector<int32_t> Merged(const std::vector<int32_t>& aligned, const std::vector<std::pair<int, int>>& runs) {
  std::vector<int32_t> out;
  for (auto [begin, end] : runs)
    out.push_back(std::accumulate(aligned.begin() + begin, aligned.begin() + end, int32_t{1}, std::multiplies<>()));
  return out;
}

// Re-emits `island` at the merged rank; returns the site line, or why not.
std::optional<std::string> RewriteIsland(GraphEdit& edit, const Island& island, std::string& why_not) {
  const ir::Subgraph& g = edit.graph();
  const int rank = static_cast<int>(island.full.size());
  std::vector<std::vector<int32_t>> shapes;
  for (int t : island.tensors) shapes.push_back(g.tensors[t].shape);
  for (int t : island.operands) shapes.push_back(Aligned(g.tensors[t].shape, rank));
  const std::vector<std::pair<int, int>> runs = MergeRuns(island.full, shapes, island.cuts);
  if (runs.size() > 4) {
    why_not = fmt::format("the operands' broadcast patterns and slice cuts over [{}] leave {} axes after merging adjacent ones",
                          fmt::join(island.full, ","), runs.size());
    return std::nullopt;
  }
  builder::GraphBuilder& b = edit.b();
  const int first_new = static_cast<int>(g.tensors.size());
  std::map<int, int> now;  // old tensor -> its value at the merged rank
  // Copies, not references: the builder appends to g.ops and g.tensors.
  for (int entry : island.entries) {
    const ir::Op op = g.ops[entry];
    const std::vector<int32_t> shape = Merged(g.tensors[op.outputs[0]].shape, runs);
    const int a = op.inputs[0];
    now[op.outputs[0]] = g.tensors[a].shape == shape ? a : b.Reshape(a, shape);
  }
  for (int t : island.operands) {
    const ir::Tensor operand = g.tensors[t];
    const std::vector<int32_t> shape = Merged(Aligned(operand.shape, rank), runs);
    if (operand.shape == shape || (operand.num_elements() == 1 && operand.rank() <= 4)) {
      now[t] = t;
    } else if (IsConstantValued(g, t)) {
      // Same values in the same order: only the stored shape changes.
      const std::string name = fmt::format("{}{}_merged_{}", edit.prefix(), operand.name, g.tensors.size());
      if (operand.is_const()) {
        now[t] = b.Const(name, operand.dtype, shape, *operand.data);
      } else {
        const npy::Array value = EvaluateConstant(g, t);
        now[t] = b.Const(name, value.dtype, shape, Bytes::Own(value.data));
      }
    } else {
      now[t] = b.Reshape(t, shape);
    }
  }
  for (int node : island.ops) {
    const ir::Op op = g.ops[node];
    if (op.code == tfl::BuiltinOperator_SLICE) {
      // Each run starts at its one cut axis (if any); the axes after it are
      // whole, so the run's window is begin * rest .. + size * rest.
      const SliceWindow w = Window(g, op);
      const std::vector<int32_t>& in = g.tensors[op.inputs[0]].shape;
      std::vector<int32_t> begin, size;
      for (auto [first, end] : runs) {
        const int32_t rest = std::accumulate(in.begin() + first + 1, in.begin() + end, int32_t{1}, std::multiplies<>());
        begin.push_back(w.begin[first] * rest);
        size.push_back(w.size[first] * rest);
      }
      now[op.outputs[0]] = b.Slice(now.at(op.inputs[0]), begin, size);
      continue;
    }
    std::vector<int> inputs;
    for (int in : op.inputs) inputs.push_back(now.at(in));
    const int out = b.Op(op.code, inputs, op.options).at(0);
    now[op.outputs[0]] = out;
  }
  for (int exit : island.exits) {
    const int y = g.ops[exit].outputs[0];
    const std::vector<int32_t> shape = g.tensors[y].shape;
    int x = now.at(g.ops[exit].inputs[0]);
    // An exit straight from an entry would hand over the entry's own input:
    // give it a RESHAPE of its own so the value has a producer in this edit.
    if (x < first_new || g.tensors[x].shape != shape) x = b.Reshape(x, shape);
    edit.Replace(exit, {x});
  }
  return fmt::format("rank-{} island of {} elementwise or slice op(s) over [{}] -> computed at [{}]", rank, island.ops.size(),
                     fmt::join(island.full, ","), fmt::join(Merged(island.full, runs), ","));
}

// Every rank >= 5 tensor connected to `start` through ops that touch one:
// the tensors lint flags for the same cause, named in a skip.
std::vector<int> Rank5Component(const ir::Subgraph& g, const std::vector<std::vector<int>>& consumers, int start) {
  std::set<int> seen;
  std::vector<int> work = {start};
  auto visit_op = [&](int node) {
    for (const auto* list : {&g.ops[node].inputs, &g.ops[node].outputs})
      for (int t : *list)
        if (t >= 0 && g.tensors[t].rank() >= 5 && !seen.count(t)) work.push_back(t);
  };
  while (!work.empty()) {
    const int t = work.back();
    work.pop_back();
    if (!seen.insert(t).second) continue;
    if (const int p = g.Producer(t); p >= 0) visit_op(p);
    for (int c : consumers[t]) visit_op(c);
  }
  return {seen.begin(), seen.end()};
}

class Rank5ToRank4Pass final : public Pass {
 public:
  std::string_view id() const override { return "rank5-to-rank4"; }
  Exactness exactness() const override { return Exactness::kExact; }
  std::string_view contract() const override {
    return "RESHAPE from <= 4-D into rank >= 5, then at most one constant TRANSPOSE, reshapes and plain unary ops, "
           "each tensor read once, back to <= 4-D, emitted when merged axes fit in 4; or an island of float32 "
           "elementwise ops (unary, binary with broadcasting) between RESHAPEs from and back to <= 4-D, every "
           "rank >= 5 tensor read only inside it, emitted when merging adjacent axes consistently for every "
           "operand's broadcast and every constant SLICE's cut axes leaves <= 4";
  }

  PassResult Apply(ir::Model& model, const PassOptions&) const override {
    PassResult result;
    GraphEdit edit(model, std::string(id()));
    const size_t count = edit.graph().ops.size();
    // Readers of the original tensors; ops this edit appends read only
    // tensors of rank <= 4, so the lists stay right for rank >= 5 ones.
    const std::vector<std::vector<int>> consumers = edit.graph().Consumers();
    std::set<int> handled;  // rank >= 5 tensors already rewritten or explained
    for (size_t i = 0; i < count; ++i) {
      const ir::Subgraph& g = edit.graph();
      if (!IsRank5Reshape(g, g.ops[i]) || handled.count(g.ops[i].outputs[0])) continue;
      const std::vector<int> component = Rank5Component(g, consumers, g.ops[i].outputs[0]);
      handled.insert(component.begin(), component.end());
      std::string why_not;
      if (std::optional<std::string> site = RewriteChain(edit, static_cast<int>(i), why_not)) {
        result.sites.push_back({static_cast<int>(i), "RESHAPE", *site});
        continue;
      }
      const Island island = Collect(g, consumers, static_cast<int>(i));
      if (island.failure.empty()) {
        if (std::optional<std::string> site = RewriteIsland(edit, island, why_not)) {
          result.sites.push_back({static_cast<int>(i), "RESHAPE", *site});
          continue;
        }
      } else if (why_not.empty()) {
        why_not = island.failure;
      }
      std::vector<std::string> names;
      for (int t : component) names.push_back(edit.graph().tensors[t].name);
      result.skipped.push_back({static_cast<int>(i), "RESHAPE", names, why_not});
    }
    edit.Commit();
    return result;
  }

 private:
  // The one-transpose chain from RESHAPE `node`; its site line, or nullopt
  // (with why_not set when a chain was found but needs more than 4 axes).
  static std::optional<std::string> RewriteChain(GraphEdit& edit, int node, std::string& why_not) {
    const std::optional<Chain> c = Follow(edit.graph(), node);
    if (!c) return std::nullopt;
    std::vector<int32_t> dims, perm;
    if (!c->dims.empty()) {
      std::tie(dims, perm) = Merge(c->dims, c->perm);
      if (dims.size() > 4) {
        why_not = fmt::format("the transpose ({}) of [{}] keeps {} axes after merging adjacent ones",
                              fmt::join(c->perm, ","), fmt::join(c->dims, ","), dims.size());
        return std::nullopt;
      }
    }
    builder::GraphBuilder& b = edit.b();
    int x = c->a;
    for (tfl::BuiltinOperator code : c->unary) x = b.Unary(code, x);
    if (!perm.empty() && !IsIdentity(perm)) {
      if (edit.graph().tensors[x].shape != dims) x = b.Reshape(x, dims);
      x = b.Transpose(x, perm);
    }
    if (x == c->a || edit.graph().tensors[x].shape != c->out) x = b.Reshape(x, c->out);
    edit.Replace(c->last, {x});
    return c->dims.empty() ? fmt::format("rank >= 5 reshape chain -> one RESHAPE to [{}]", fmt::join(c->out, ","))
                           : fmt::format("rank-{} transpose -> [{}] transposed ({})", c->dims.size(),
                                         fmt::join(dims, ","), fmt::join(perm, ","));
  }
};

}  // namespace

const Pass& Rank5ToRank4() {
  static const Rank5ToRank4Pass pass;
  return pass;
}

}  // namespace gpuclean::rewrite::passes
