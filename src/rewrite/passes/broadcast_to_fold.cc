// broadcast-to-fold: BROADCAST_TO is rejected by ML Drift when its input is a
// runtime tensor, even at rank 4 (LiteRT#9191), and a BROADCAST_TO of a
// constant is an op with constant inputs only ("all-const-inputs").
//   constant input  -> the broadcast value stored at the target shape;
//   runtime input   -> dropped when every reader is a binary elementwise op
//                      that broadcasts to the same shape itself; else RESHAPE
//                      to the target rank (when it is lower), then per
//                      broadcast axis copies joined by CONCATENATION.
// Both only move values, so the pass is exact. The copies are built by
// doubling (t, tt, tttt, ...) and the powers that sum to the extent joined
// once, so an extent of n costs about 2 log2(n) concatenations of at most
// a few inputs rather than one concatenation of n.
#include <fmt/format.h>

#include <algorithm>

#include "gpuclean/error.h"
#include "gpuclean/shapes.h"
#include "rewrite/passes/passes.h"
#include "rewrite/pattern_pass.h"

namespace gpuclean::rewrite::passes {
namespace {

constexpr int64_t kMaxFoldedElements = int64_t{16} << 20;

// `t` repeated `n` times along `axis` (its extent there is 1).
int Repeat(builder::GraphBuilder& b, int t, int32_t n, int32_t axis) {
  std::vector<int> parts;
  int power = t;  // t repeated 2^k times
  for (int32_t rest = n;;) {
    if (rest & 1) parts.push_back(power);
    rest >>= 1;
    if (rest == 0) break;
    power = b.Concatenation({power, power}, axis);
  }
  return parts.size() == 1 ? parts[0] : b.Concatenation(parts, axis);
}

// Right-aligned broadcast of two shapes (they are known to be compatible).
std::vector<int32_t> Broadcast(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  std::vector<int32_t> out(std::max(a.size(), b.size()), 1);
  for (size_t k = 0; k < out.size(); ++k) {
    const int32_t da = k < a.size() ? a[a.size() - 1 - k] : 1, db = k < b.size() ? b[b.size() - 1 - k] : 1;
    out[out.size() - 1 - k] = da == 1 ? db : da;
  }
  return out;
}

// When every reader of BROADCAST_TO's output is a binary elementwise op that
// broadcasts its operands anyway (ONNX Expand feeding a Mul), the readers
// take `x` itself and give the same shape: the copies are never made.
bool FoldIntoConsumers(GraphEdit& edit, int node, int x, int out) {
  const ir::Subgraph& g = edit.graph();
  if (g.IsGraphOutput(out)) return false;
  std::vector<int> readers;
  for (size_t k = 0; k < g.ops.size(); ++k) {
    const ir::Op& op = g.ops[k];
    if (std::find(op.inputs.begin(), op.inputs.end(), out) == op.inputs.end()) continue;
    if (!IsBinaryElementwise(op.code) || op.inputs.size() != 2 || op.outputs.size() != 1 ||
        op.inputs[0] == op.inputs[1])
      return false;
    const int other = op.inputs[0] == out ? op.inputs[1] : op.inputs[0];
    const std::vector<int32_t>& other_shape = g.tensors[other].shape;
    const std::vector<int32_t>& x_shape = g.tensors[x].shape;
    bool compatible = true;
    for (size_t d = 0; d < std::min(x_shape.size(), other_shape.size()); ++d) {
      const int32_t a = x_shape[x_shape.size() - 1 - d], b = other_shape[other_shape.size() - 1 - d];
      compatible = compatible && (a == b || a == 1 || b == 1);
    }
    if (!compatible || Broadcast(x_shape, other_shape) != g.tensors[op.outputs[0]].shape) return false;
    readers.push_back(static_cast<int>(k));
  }
  if (readers.empty()) return false;
  for (int k : readers) {
    const ir::Op op = edit.graph().ops[k];
    std::vector<int> inputs = op.inputs;
    for (int& in : inputs)
      if (in == out) in = x;
    edit.Replace(k, {edit.b().Op(op.code, inputs, op.options).at(0)});
  }
  edit.Remove(node);
  return true;
}

class BroadcastToFoldPass final : public OpPass {
 public:
  BroadcastToFoldPass()
      : OpPass({"broadcast-to-fold", Exactness::kExact,
                "BROADCAST_TO with a static target of rank <= 4; constants stored at the target shape, runtime "
                "tensors repeated by CONCATENATION (values only move)"},
               {tfl::BuiltinOperator_BROADCAST_TO}) {}

 private:
  std::optional<std::string> Visit(OpSite& site) const override {
    const ir::Op& op = site.op;
    if (op.inputs.size() != 2) return std::nullopt;
    GraphEdit& edit = site.edit;
    const int x = op.inputs[0], out = op.outputs.at(0);
    if (ConstInts(edit.graph(), op.inputs[1]).empty()) return std::nullopt;  // the target comes at runtime
    const ir::Tensor xt = site.tensor(x), ot = site.tensor(out);
    if (ot.rank() > 4 || xt.rank() > ot.rank() || !xt.quant.empty()) return std::nullopt;
    const int lead = ot.rank() - xt.rank();
    bool broadcastable = true;
    for (int d = 0; d < xt.rank(); ++d)
      broadcastable = broadcastable && (xt.shape[d] == 1 || xt.shape[d] == ot.shape[d + lead]);
    if (!broadcastable) return std::nullopt;

    if (IsConstantValued(edit.graph(), x)) {
      if (edit.graph().IsGraphOutput(out) || ot.num_elements() > kMaxFoldedElements) return std::nullopt;
      npy::Array value;
      try {
        value = EvaluateConstant(edit.graph(), out);
      } catch (const Error&) {
        return std::nullopt;
      }
      const int stored =
          edit.mutable_graph().AddConst(edit.prefix() + ot.name, ot.dtype, ot.shape, Bytes::Own(std::move(value.data)));
      edit.Replace(site.node, {stored});
      return fmt::format("constant stored at {} ({} values)", ir::FormatShape(ot.shape), ot.num_elements());
    }

    if (xt.dtype != tfl::TensorType_FLOAT32) return std::nullopt;
    if (FoldIntoConsumers(edit, site.node, x, out))
      return fmt::format("dropped: its readers broadcast {} themselves", ir::FormatShape(xt.shape));
    builder::GraphBuilder& b = edit.b();
    int y = x;
    if (lead > 0) {
      builder::Shape padded(static_cast<size_t>(lead), 1);
      padded.insert(padded.end(), xt.shape.begin(), xt.shape.end());
      y = b.Reshape(x, padded);
    }
    int axes = 0;
    for (int d = 0; d < ot.rank(); ++d) {
      if (b.shape(y)[d] == ot.shape[d]) continue;
      y = Repeat(b, y, ot.shape[d], d);
      ++axes;
    }
    // Nothing to repeat: an identity RESHAPE still gives the old output a producer.
    if (y == x) y = b.Reshape(x, ot.shape);
    edit.Replace(site.node, {y});
    return fmt::format("{} -> {} by CONCATENATION along {} axis/axes", ir::FormatShape(xt.shape),
                       ir::FormatShape(ot.shape), axes);
  }
};

}  // namespace

const Pass& BroadcastToFold() {
  static const BroadcastToFoldPass pass;
  return pass;
}

}  // namespace gpuclean::rewrite::passes
