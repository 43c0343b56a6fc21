// rank5-to-rank4: RESHAPE / TRANSPOSE chains through rank >= 5 tensors (6-D
// window partition, 5-D head split, pixel shuffle) fail to compile on the
// GPU. A chain  a (<= 4-D) -> RESHAPE D -> TRANSPOSE P -> RESHAPE b (<= 4-D)
// moves the same elements as one with D's size-1 axes dropped and every run
// of axes that stays adjacent and in order under P merged into one; when
// that leaves <= 4 axes the chain is re-emitted that way. Elementwise unary
// ops on the chain commute with data movement and are applied to `a`.
// Pure data movement, so bit-identical. Chains with two or more transposes,
// or that need more than 4 axes after merging, are left alone.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <numeric>
#include <optional>

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

class Rank5ToRank4Pass final : public Pass {
 public:
  std::string_view id() const override { return "rank5-to-rank4"; }
  Exactness exactness() const override { return Exactness::kExact; }
  std::string_view contract() const override {
    return "RESHAPE from <= 4-D into rank >= 5, then at most one constant TRANSPOSE, reshapes and plain unary ops, "
           "each tensor read once, back to <= 4-D; emitted when merged axes fit in 4";
  }

  PassResult Apply(ir::Model& model, const PassOptions&) const override {
    PassResult result;
    GraphEdit edit(model, std::string(id()));
    const size_t count = edit.graph().ops.size();
    for (size_t i = 0; i < count; ++i) {
      const std::optional<Chain> c = Follow(edit.graph(), static_cast<int>(i));
      if (!c) continue;
      std::vector<int32_t> dims, perm;
      if (!c->dims.empty()) {
        std::tie(dims, perm) = Merge(c->dims, c->perm);
        if (dims.size() > 4) continue;
      }
      builder::GraphBuilder& b = edit.b();
      int x = c->a;
      for (tfl::BuiltinOperator code : c->unary) x = b.Unary(code, x);
      if (!perm.empty() && !IsIdentity(perm)) {
        if (edit.graph().tensors[x].shape != dims) x = b.Reshape(x, dims);
        x = b.Transpose(x, perm);
      }
      if (x == c->a || edit.graph().tensors[x].shape != c->out) x = b.Reshape(x, c->out);
      result.sites.push_back(
          {static_cast<int>(i), "RESHAPE",
           c->dims.empty() ? fmt::format("rank >= 5 reshape chain -> one RESHAPE to [{}]", fmt::join(c->out, ","))
                           : fmt::format("rank-{} transpose -> [{}] transposed ({})", c->dims.size(),
                                         fmt::join(dims, ","), fmt::join(perm, ","))});
      edit.Replace(c->last, {x});
    }
    edit.Commit();
    return result;
  }
};

}  // namespace

const Pass& Rank5ToRank4() {
  static const Rank5ToRank4Pass pass;
  return pass;
}

}  // namespace gpuclean::rewrite::passes
