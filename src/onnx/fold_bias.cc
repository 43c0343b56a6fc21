#include "onnx/fold_bias.h"

#include <algorithm>

namespace gpuclean::onnx {
namespace {

// The FULLY_CONNECTED writing `t`, when it has no bias, no fused activation
// and one output; -1 otherwise.
int BiaslessDense(const ir::Subgraph& g, const std::vector<int>& producer, int32_t t) {
  if (t < 0 || producer[static_cast<size_t>(t)] < 0) return -1;
  const int p = producer[static_cast<size_t>(t)];
  const ir::Op& op = g.ops[static_cast<size_t>(p)];
  const auto* o = op.options.AsFullyConnectedOptions();
  if (op.code != tfl::BuiltinOperator_FULLY_CONNECTED || !o ||
      o->fused_activation_function != tfl::ActivationFunctionType_NONE || op.outputs.size() != 1 ||
      op.inputs.size() < 2 || (op.inputs.size() > 2 && op.inputs[2] >= 0))
    return -1;
  return p;
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
      const int p = BiaslessDense(graph, producer, t);
      if (p < 0 || c < 0) continue;
      ir::Op& dense = graph.ops[static_cast<size_t>(p)];
      if (dense.inputs.size() < 2 || dense.inputs[1] < 0) continue;  // no weights to size the bias by
      const ir::Tensor& weights = graph.tensors[static_cast<size_t>(dense.inputs[1])];
      const ir::Tensor& value = graph.tensors[static_cast<size_t>(t)];
      const ir::Tensor& sum = graph.tensors[static_cast<size_t>(add.outputs[0])];
      if (weights.shape.size() != 2 || !IsRowOfN(graph.tensors[static_cast<size_t>(c)], weights.shape[0]) ||
          consumers[static_cast<size_t>(t)].size() != 1 || graph.IsGraphOutput(t) ||
          value.dtype != tfl::TensorType_FLOAT32 || sum.dtype != tfl::TensorType_FLOAT32 || sum.shape != value.shape)
        continue;
      FoldedOp names{value.name, sum.name};
      const int32_t n = weights.shape[0];
      int32_t bias = c;
      if (graph.tensors[static_cast<size_t>(c)].shape.size() != 1) {  // AddConst may move every tensor
        const ir::Tensor& row = graph.tensors[static_cast<size_t>(c)];
        std::string name = row.name + "|bias";
        Bytes data = *row.data;
        bias = graph.AddConst(std::move(name), tfl::TensorType_FLOAT32, {n}, std::move(data));
      }
      if (dense.inputs.size() < 3) dense.inputs.resize(3, -1);
      dense.inputs[2] = bias;
      dense.options.AsFullyConnectedOptions()->fused_activation_function =
          ao ? ao->fused_activation_function : tfl::ActivationFunctionType_NONE;
      dense.outputs[0] = add.outputs[0];
      folded[a] = true;
      out.push_back(std::move(names));
      break;
    }
  }
  DropOps(graph, folded);
  return out;
}

}  // namespace gpuclean::onnx
