#include "exec/layer_norm_pattern.h"

#include <cstring>

namespace gpuclean::exec {
namespace {

// MEAN over the last axis only, keeping it.
bool IsLastAxisMean(const ir::Subgraph& g, const ir::Op& op) {
  if (op.code != tfl::BuiltinOperator_MEAN || op.inputs.size() < 2 || op.outputs.size() != 1 || op.inputs[0] < 0 ||
      op.inputs[1] < 0)
    return false;
  const ir::Tensor& axes = g.tensors[op.inputs[1]];
  if (!axes.is_const() || axes.dtype != tfl::TensorType_INT32 || axes.num_elements() != 1 ||
      axes.data->size() < sizeof(int32_t))
    return false;
  int32_t axis = 0;
  std::memcpy(&axis, axes.data->data(), sizeof(axis));
  const int rank = g.tensors[op.inputs[0]].rank();
  return rank > 0 && (axis == rank - 1 || axis == -1) && g.tensors[op.outputs[0]].rank() == rank;
}

// The one op reading `t` when it has `code`, else -1.
int SoleConsumer(const std::vector<std::vector<int>>& consumers, const ir::Subgraph& g, int32_t t,
                 tfl::BuiltinOperator code) {
  if (t < 0 || consumers[t].size() != 1) return -1;
  const int c = consumers[t].front();
  return g.ops[c].code == code ? c : -1;
}

// A two-input op's operand other than `t`, or -1 when `t` is not one of them.
int32_t OtherOperand(const ir::Op& op, int32_t t) {
  if (op.inputs.size() != 2 || op.outputs.size() != 1) return -1;
  if (op.inputs[0] == t) return op.inputs[1];
  if (op.inputs[1] == t) return op.inputs[0];
  return -1;
}

}  // namespace

std::optional<LayerNormPattern> MatchLayerNorm(const ir::Subgraph& g, const std::vector<std::vector<int>>& consumers,
                                               int mean) {
  LayerNormPattern p;
  const ir::Op& first = g.ops[mean];
  if (!IsLastAxisMean(g, first)) return std::nullopt;
  p.mean = mean;
  p.x = first.inputs[0];
  p.mu = first.outputs[0];
  p.sub = SoleConsumer(consumers, g, p.mu, tfl::BuiltinOperator_SUB);
  if (p.sub < 0) return std::nullopt;
  const ir::Op& sub = g.ops[p.sub];
  if (sub.inputs.size() != 2 || sub.outputs.size() != 1 || sub.inputs[0] != p.x || sub.inputs[1] != p.mu)
    return std::nullopt;
  p.d = sub.outputs[0];
  if (consumers[p.d].size() != 2) return std::nullopt;
  for (int c : consumers[p.d]) {
    const ir::Op& op = g.ops[c];
    const bool squares =
        (op.code == tfl::BuiltinOperator_MUL && op.inputs.size() == 2 && op.inputs[0] == p.d && op.inputs[1] == p.d) ||
        (op.code == tfl::BuiltinOperator_SQUARE && op.inputs.size() == 1 && op.inputs[0] == p.d);
    if (squares && op.outputs.size() == 1)
      p.square = c;
    else if (op.code == tfl::BuiltinOperator_MUL)
      p.normalize = c;
  }
  if (p.square < 0 || p.normalize < 0) return std::nullopt;
  p.s = g.ops[p.square].outputs[0];
  p.variance = SoleConsumer(consumers, g, p.s, tfl::BuiltinOperator_MEAN);
  if (p.variance < 0 || !IsLastAxisMean(g, g.ops[p.variance])) return std::nullopt;
  p.v = g.ops[p.variance].outputs[0];
  p.add = SoleConsumer(consumers, g, p.v, tfl::BuiltinOperator_ADD);
  if (p.add < 0) return std::nullopt;
  p.epsilon = OtherOperand(g.ops[p.add], p.v);
  if (p.epsilon < 0 || !g.tensors[p.epsilon].is_const()) return std::nullopt;
  p.e = g.ops[p.add].outputs[0];
  p.rsqrt = SoleConsumer(consumers, g, p.e, tfl::BuiltinOperator_RSQRT);
  if (p.rsqrt < 0 || g.ops[p.rsqrt].outputs.size() != 1) return std::nullopt;
  p.r = g.ops[p.rsqrt].outputs[0];
  if (SoleConsumer(consumers, g, p.r, tfl::BuiltinOperator_MUL) != p.normalize ||
      OtherOperand(g.ops[p.normalize], p.r) != p.d)
    return std::nullopt;
  p.y = g.ops[p.normalize].outputs[0];
  for (int32_t t : p.Intermediates())
    if (g.IsGraphOutput(t)) return std::nullopt;
  return p;
}

}  // namespace gpuclean::exec
