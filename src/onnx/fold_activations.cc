#include "onnx/fold_activations.h"

#include <optional>

namespace gpuclean::onnx {
namespace {

std::optional<tfl::ActivationFunctionType> AsFusedActivation(tfl::BuiltinOperator code) {
  switch (code) {
    case tfl::BuiltinOperator_RELU: return tfl::ActivationFunctionType_RELU;
    case tfl::BuiltinOperator_RELU6: return tfl::ActivationFunctionType_RELU6;
    case tfl::BuiltinOperator_RELU_N1_TO_1: return tfl::ActivationFunctionType_RELU_N1_TO_1;
    default: return std::nullopt;
  }
}

// The producer's fused activation field when it has one and it is NONE: the
// ops whose fused activation every current ML Drift target accepts
// (operation_parser.cc's NONE/RELU/RELU6/RELU_N1_TO_1/TANH/SIGMOID list in
// data/compat) and LiteRT's CPU kernels apply after the op's own rounding.
tfl::ActivationFunctionType* FreeActivationSlot(ir::Op& op) {
  tfl::ActivationFunctionType* slot = FusedActivationField(op);
  return slot && *slot == tfl::ActivationFunctionType_NONE ? slot : nullptr;
}

}  // namespace

tfl::ActivationFunctionType* FusedActivationField(ir::Op& op) {
  if (auto* o = op.options.AsConv2DOptions()) return &o->fused_activation_function;
  if (auto* o = op.options.AsDepthwiseConv2DOptions()) return &o->fused_activation_function;
  if (auto* o = op.options.AsFullyConnectedOptions()) return &o->fused_activation_function;
  if (auto* o = op.options.AsAddOptions()) return &o->fused_activation_function;
  if (auto* o = op.options.AsSubOptions()) return &o->fused_activation_function;
  if (auto* o = op.options.AsMulOptions()) return &o->fused_activation_function;
  return nullptr;
}

std::vector<int> ProducerOfEachTensor(const ir::Subgraph& graph) {
  std::vector<int> producer(graph.tensors.size(), -1);
  for (size_t i = 0; i < graph.ops.size(); ++i)
    for (int32_t t : graph.ops[i].outputs)
      if (t >= 0) producer[static_cast<size_t>(t)] = static_cast<int>(i);
  return producer;
}

void DropOps(ir::Subgraph& graph, const std::vector<bool>& drop) {
  std::vector<ir::Op> kept;
  kept.reserve(graph.ops.size());
  for (size_t i = 0; i < graph.ops.size(); ++i)
    if (!drop[i]) kept.push_back(std::move(graph.ops[i]));
  graph.ops = std::move(kept);
}

std::vector<FoldedOp> FoldActivations(ir::Subgraph& graph) {
  std::vector<FoldedOp> unwritten;
  const std::vector<std::vector<int>> consumers = graph.Consumers();
  const std::vector<int> producer = ProducerOfEachTensor(graph);
  std::vector<bool> folded(graph.ops.size(), false);
  for (size_t a = 0; a < graph.ops.size(); ++a) {
    const ir::Op& activation = graph.ops[a];
    const auto fused = AsFusedActivation(activation.code);
    if (!fused || activation.inputs.size() != 1 || activation.outputs.size() != 1) continue;
    const int32_t t = activation.inputs[0];
    if (t < 0 || producer[static_cast<size_t>(t)] < 0) continue;
    const auto p = static_cast<size_t>(producer[static_cast<size_t>(t)]);
    ir::Op& op = graph.ops[p];
    tfl::ActivationFunctionType* slot = FreeActivationSlot(op);
    if (!slot || op.outputs.size() != 1 || consumers[static_cast<size_t>(t)].size() != 1 || graph.IsGraphOutput(t) ||
        graph.tensors[static_cast<size_t>(t)].dtype != tfl::TensorType_FLOAT32 ||
        graph.tensors[static_cast<size_t>(activation.outputs[0])].dtype != tfl::TensorType_FLOAT32)
      continue;
    *slot = *fused;
    op.outputs[0] = activation.outputs[0];
    folded[a] = true;
    unwritten.push_back(
        {graph.tensors[static_cast<size_t>(t)].name, graph.tensors[static_cast<size_t>(activation.outputs[0])].name});
  }
  DropOps(graph, folded);
  return unwritten;
}

}  // namespace gpuclean::onnx
