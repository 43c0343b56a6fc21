#include "onnx/fold_channel_scale.h"

#include <algorithm>
#include <cmath>
#include <optional>

namespace gpuclean::onnx {
namespace {

// The float32 constant behind tensor t, or nullopt.
std::optional<std::span<const float>> ConstFloats(const ir::Subgraph& g, int32_t t) {
  if (t < 0) return std::nullopt;
  const ir::Tensor& c = g.tensors[static_cast<size_t>(t)];
  if (!c.is_const() || c.dtype != tfl::TensorType_FLOAT32 || c.sparsity ||
      c.data->size() != static_cast<size_t>(c.num_elements()) * sizeof(float))
    return std::nullopt;
  return c.data->as<float>();
}

// The scale per output channel from a constant of n values along its last
// axis (ones elsewhere) or of one value; empty otherwise.
std::vector<float> ChannelScale(const ir::Subgraph& g, int32_t t, int32_t n) {
  const auto values = ConstFloats(g, t);
  if (!values) return {};
  const ir::Tensor& c = g.tensors[static_cast<size_t>(t)];
  if (values->size() == 1) return std::vector<float>(static_cast<size_t>(n), (*values)[0]);
  if (c.shape.empty() || c.shape.back() != n ||
      !std::all_of(c.shape.begin(), c.shape.end() - 1, [](int32_t d) { return d == 1; }))
    return {};
  return {values->begin(), values->end()};
}

// The op's output channel count and the stride of its weights' output
// channel: CONV_2D [O, KH, KW, I] and FULLY_CONNECTED [O, K] lead with it,
// DEPTHWISE_CONV_2D [1, KH, KW, O] ends with it. nullopt for other ops, or
// an op with a fused activation (the MUL would come after it).
struct Layout {
  int32_t channels = 0;
  bool channel_last = false;
};
std::optional<Layout> FoldableProducer(const ir::Subgraph& g, const ir::Op& op) {
  if (op.inputs.size() < 2 || op.outputs.size() != 1 || op.inputs[1] < 0) return std::nullopt;
  const ir::Tensor& w = g.tensors[static_cast<size_t>(op.inputs[1])];
  tfl::ActivationFunctionType act = tfl::ActivationFunctionType_NONE;
  Layout layout;
  switch (op.code) {
    case tfl::BuiltinOperator_CONV_2D:
      if (!op.options.AsConv2DOptions() || w.rank() != 4) return std::nullopt;
      act = op.options.AsConv2DOptions()->fused_activation_function;
      layout.channels = w.shape[0];
      break;
    case tfl::BuiltinOperator_DEPTHWISE_CONV_2D:
      if (!op.options.AsDepthwiseConv2DOptions() || w.rank() != 4) return std::nullopt;
      act = op.options.AsDepthwiseConv2DOptions()->fused_activation_function;
      layout.channels = w.shape[3];
      layout.channel_last = true;
      break;
    case tfl::BuiltinOperator_FULLY_CONNECTED:
      if (!op.options.AsFullyConnectedOptions() || w.rank() != 2) return std::nullopt;
      act = op.options.AsFullyConnectedOptions()->fused_activation_function;
      layout.channels = w.shape[0];
      break;
    default: return std::nullopt;
  }
  if (act != tfl::ActivationFunctionType_NONE || layout.channels <= 0) return std::nullopt;
  return layout;
}

bool AllWholeNumbers(std::span<const float> w) {
  return std::all_of(w.begin(), w.end(), [](float v) { return std::isfinite(v) && v == std::nearbyint(v); });
}

}  // namespace

std::vector<FoldedOp> FoldChannelScales(ir::Subgraph& graph) {
  std::vector<FoldedOp> out;
  const std::vector<std::vector<int>> consumers = graph.Consumers();
  const std::vector<int> producer = ProducerOfEachTensor(graph);
  std::vector<bool> folded(graph.ops.size(), false);
  for (size_t m = 0; m < graph.ops.size(); ++m) {
    const ir::Op& mul = graph.ops[m];
    const auto* mo = mul.options.AsMulOptions();
    if (mul.code != tfl::BuiltinOperator_MUL || mul.inputs.size() != 2 || mul.outputs.size() != 1) continue;
    for (int side = 0; side < 2; ++side) {
      const int32_t t = mul.inputs[static_cast<size_t>(side)], c = mul.inputs[static_cast<size_t>(1 - side)];
      if (t < 0 || producer[static_cast<size_t>(t)] < 0) continue;
      const auto p = static_cast<size_t>(producer[static_cast<size_t>(t)]);
      const std::optional<Layout> layout = FoldableProducer(graph, graph.ops[p]);
      if (!layout) continue;
      const ir::Tensor& value = graph.tensors[static_cast<size_t>(t)];
      const ir::Tensor& product = graph.tensors[static_cast<size_t>(mul.outputs[0])];
      if (consumers[static_cast<size_t>(t)].size() != 1 || graph.IsGraphOutput(t) ||
          value.dtype != tfl::TensorType_FLOAT32 || product.dtype != tfl::TensorType_FLOAT32 ||
          product.shape != value.shape || value.shape.empty() || value.shape.back() != layout->channels)
        continue;
      const std::vector<float> scale = ChannelScale(graph, c, layout->channels);
      const ir::Op& op = graph.ops[p];
      const auto weights = ConstFloats(graph, op.inputs[1]);
      const int32_t bias_input = op.inputs.size() > 2 ? op.inputs[2] : -1;
      const auto bias = ConstFloats(graph, bias_input);
      if (scale.empty() || !weights || AllWholeNumbers(*weights) || (bias_input >= 0 && !bias) ||
          (bias && bias->size() != scale.size()) || weights->size() % scale.size() != 0)
        continue;
      std::vector<float> w(weights->begin(), weights->end());
      const size_t per_channel = w.size() / scale.size();
      for (size_t i = 0; i < w.size(); ++i) w[i] *= scale[layout->channel_last ? i % scale.size() : i / per_channel];
      const ir::Tensor& old_w = graph.tensors[static_cast<size_t>(op.inputs[1])];
      FoldedOp names{value.name, product.name};
      const tfl::ActivationFunctionType act = mo ? mo->fused_activation_function : tfl::ActivationFunctionType_NONE;
      const std::string w_name = old_w.name + "|scaled", b_name = product.name + "|bias";
      const std::vector<int32_t> w_shape = old_w.shape;
      std::vector<float> b;
      if (bias) {
        b.assign(bias->begin(), bias->end());
        for (size_t i = 0; i < b.size(); ++i) b[i] *= scale[i];
      }
      const int32_t output = mul.outputs[0];
      // AddConst may move every tensor: nothing above is read after it.
      const int w_index =
          graph.AddConst(w_name, tfl::TensorType_FLOAT32, w_shape, Bytes::FromValues(std::span<const float>(w)));
      ir::Op& conv = graph.ops[p];
      conv.inputs[1] = w_index;
      if (bias)
        conv.inputs[2] = graph.AddConst(b_name, tfl::TensorType_FLOAT32, {static_cast<int32_t>(b.size())},
                                        Bytes::FromValues(std::span<const float>(b)));
      *FusedActivationField(conv) = act;
      conv.outputs[0] = output;
      folded[m] = true;
      out.push_back(std::move(names));
      break;
    }
  }
  DropOps(graph, folded);
  return out;
}

}  // namespace gpuclean::onnx
