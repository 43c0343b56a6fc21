#include "onnx/fold_bias.h"

#include <algorithm>

namespace gpuclean::onnx {
namespace {

// The op writing `t` whose bias an ADD of a constant can become, and its
// output channel count: a FULLY_CONNECTED without a bias, or a CONV_2D or
// DEPTHWISE_CONV_2D (with or without one), each with no fused activation
// and one output. -1 otherwise.
int BiasTarget(const ir::Subgraph& g, const std::vector<int>& producer, int32_t t, int32_t* channels) {
  if (t < 0 || producer[static_cast<size_t>(t)] < 0) return -1;
  const int p = producer[static_cast<size_t>(t)];
  const ir::Op& op = g.ops[static_cast<size_t>(p)];
  if (op.outputs.size() != 1 || op.inputs.size() < 2 || op.inputs[1] < 0) return -1;
  const ir::Tensor& w = g.tensors[static_cast<size_t>(op.inputs[1])];
  const bool has_bias = op.inputs.size() > 2 && op.inputs[2] >= 0;
  tfl::ActivationFunctionType act = tfl::ActivationFunctionType_NONE;
  if (const auto* o = op.options.AsFullyConnectedOptions(); o && op.code == tfl::BuiltinOperator_FULLY_CONNECTED) {
    if (has_bias || w.rank() != 2) return -1;
    act = o->fused_activation_function;
    *channels = w.shape[0];
  } else if (const auto* c = op.options.AsConv2DOptions(); c && op.code == tfl::BuiltinOperator_CONV_2D) {
    if (w.rank() != 4) return -1;
    act = c->fused_activation_function;
    *channels = w.shape[0];
  } else if (const auto* d = op.options.AsDepthwiseConv2DOptions();
             d && op.code == tfl::BuiltinOperator_DEPTHWISE_CONV_2D) {
    if (w.rank() != 4) return -1;
    act = d->fused_activation_function;
    *channels = w.shape[3];
  } else {
    return -1;
  }
  return act == tfl::ActivationFunctionType_NONE ? p : -1;
}

// `c` holds N floats along its last axis only ([N], [1, N], [1, 1, 1, N]).
bool IsRowOfN(const ir::Tensor& c, int32_t n) {
  if (!c.is_const() || c.dtype != tfl::TensorType_FLOAT32 || c.sparsity || c.shape.empty() || c.shape.back() != n)
    return false;
  return std::all_of(c.shape.begin(), c.shape.end() - 1, [](int32_t d) { return d == 1; }) &&
         c.data->size() == static_cast<size_t>(n) * sizeof(float);
}

}  // namespace

std::vector<FoldedOp> FoldBiasAdds(ir::Subgraph& graph) {
  std::vector<FoldedOp> out;
  const std::vector<std::vector<int>> consumers = graph.Consumers();
  const std::vector<int> producer = ProducerOfEachTensor(graph);
  std::vector<bool> folded(graph.ops.size(), false);
  for (size_t a = 0; a < graph.ops.size(); ++a) {
    const ir::Op& add = graph.ops[a];
    const auto* ao = add.options.AsAddOptions();
    if (add.code != tfl::BuiltinOperator_ADD || add.inputs.size() != 2 || add.outputs.size() != 1) continue;
    for (int side = 0; side < 2; ++side) {
      const int32_t t = add.inputs[static_cast<size_t>(side)], c = add.inputs[static_cast<size_t>(1 - side)];
      int32_t n = 0;
      const int p = BiasTarget(graph, producer, t, &n);
      if (p < 0 || c < 0) continue;
      const ir::Tensor& value = graph.tensors[static_cast<size_t>(t)];
      const ir::Tensor& sum = graph.tensors[static_cast<size_t>(add.outputs[0])];
      if (!IsRowOfN(graph.tensors[static_cast<size_t>(c)], n) || consumers[static_cast<size_t>(t)].size() != 1 ||
          graph.IsGraphOutput(t) || value.dtype != tfl::TensorType_FLOAT32 || sum.dtype != tfl::TensorType_FLOAT32 ||
          sum.shape != value.shape)
        continue;
      ir::Op& layer = graph.ops[static_cast<size_t>(p)];
      const int32_t old_bias = layer.inputs.size() > 2 ? layer.inputs[2] : -1;
      if (old_bias >= 0) {
        const ir::Tensor& b = graph.tensors[static_cast<size_t>(old_bias)];
        if (!b.is_const() || b.dtype != tfl::TensorType_FLOAT32 || b.sparsity ||
            b.data->size() != static_cast<size_t>(n) * sizeof(float))
          continue;
      }
      FoldedOp names{value.name, sum.name};
      int32_t bias = c;
      if (old_bias >= 0 || graph.tensors[static_cast<size_t>(c)].shape.size() != 1) {
        // A new [N] constant: the row itself, or the old bias plus it (one
        // rounding per channel). AddConst may move every tensor.
        const auto row = graph.tensors[static_cast<size_t>(c)].data->as<float>();
        std::vector<float> values(row.begin(), row.end());
        if (old_bias >= 0) {
          const auto before = graph.tensors[static_cast<size_t>(old_bias)].data->as<float>();
          for (size_t i = 0; i < values.size(); ++i) values[i] = before[i] + values[i];
        }
        std::string name = graph.tensors[static_cast<size_t>(c)].name + "|bias";
        bias = graph.AddConst(std::move(name), tfl::TensorType_FLOAT32, {n},
                              Bytes::FromValues(std::span<const float>(values)));
      }
      ir::Op& target = graph.ops[static_cast<size_t>(p)];
      if (target.inputs.size() < 3) target.inputs.resize(3, -1);
      target.inputs[2] = bias;
      *FusedActivationField(target) = ao ? ao->fused_activation_function : tfl::ActivationFunctionType_NONE;
      target.outputs[0] = add.outputs[0];
      folded[a] = true;
      out.push_back(std::move(names));
      break;
    }
  }
  DropOps(graph, folded);
  return out;
}

}  // namespace gpuclean::onnx
