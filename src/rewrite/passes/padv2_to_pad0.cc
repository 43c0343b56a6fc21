// padv2-to-pad0: PADV2(x, c) feeding only a MAX_POOL_2D -> PAD(x) with zeros.
// Converters pad with -inf (or -1e9) so padding never wins a max; the GPU
// delegates take only zero PAD. When x >= 0 (it comes out of a ReLU) and
// every pooling window holds at least one real element, the window max is
// >= 0 and a pad value of 0 cannot change it either: exact.
#include <fmt/format.h>

#include <algorithm>

#include "rewrite/graph_edit.h"
#include "rewrite/passes/passes.h"

namespace gpuclean::rewrite::passes {
namespace {

using tfl::ActivationFunctionType;

std::optional<ActivationFunctionType> FusedActivation(const ir::Op& op) {
  const auto& o = op.options;
  if (const auto* p = o.AsConv2DOptions()) return p->fused_activation_function;
  if (const auto* p = o.AsDepthwiseConv2DOptions()) return p->fused_activation_function;
  if (const auto* p = o.AsTransposeConvOptions()) return p->fused_activation_function;
  if (const auto* p = o.AsFullyConnectedOptions()) return p->fused_activation_function;
  if (const auto* p = o.AsAddOptions()) return p->fused_activation_function;
  if (const auto* p = o.AsSubOptions()) return p->fused_activation_function;
  if (const auto* p = o.AsMulOptions()) return p->fused_activation_function;
  if (const auto* p = o.AsDivOptions()) return p->fused_activation_function;
  if (const auto* p = o.AsPool2DOptions()) return p->fused_activation_function;
  if (const auto* p = o.AsConcatenationOptions()) return p->fused_activation_function;
  return std::nullopt;
}

// Whether every value of `tensor` is >= 0 by construction of its producer.
bool NonNegative(const ir::Subgraph& graph, int tensor) {
  const int producer = graph.Producer(tensor);
  if (producer < 0) return false;
  const ir::Op& op = graph.ops[producer];
  switch (op.code) {
    case tfl::BuiltinOperator_RELU:
    case tfl::BuiltinOperator_RELU6:
    case tfl::BuiltinOperator_RELU_0_TO_1:
      return true;
    default:
      break;
  }
  const auto act = FusedActivation(op);
  return act && (*act == tfl::ActivationFunctionType_RELU || *act == tfl::ActivationFunctionType_RELU6);
}

// Along one spatial axis of the padded map: every pooling window overlaps
// the real rows [before, before + real).
bool EveryWindowSeesReal(int32_t before, int32_t real, int32_t padded, int32_t filter, int32_t stride,
                         tfl::Padding pool_padding) {
  int32_t out = 0, pool_before = 0;
  if (pool_padding == tfl::Padding_SAME) {
    out = (padded + stride - 1) / stride;
    const int64_t total = static_cast<int64_t>(out - 1) * stride + filter - padded;
    pool_before = total > 0 ? static_cast<int32_t>(total / 2) : 0;
  } else {
    out = std::max(0, (padded - filter + stride) / stride);
  }
  for (int32_t o = 0; o < out; ++o) {
    // SAME's own padding is ignored by the max, so clip to the map.
    const int32_t lo = std::max(0, o * stride - pool_before);
    const int32_t hi = std::min(padded, o * stride - pool_before + filter);
    if (std::max(lo, before) >= std::min(hi, before + real)) return false;
  }
  return true;
}

class Padv2ToPad0Pass final : public Pass {
 public:
  std::string_view id() const override { return "padv2-to-pad0"; }
  Exactness exactness() const override { return Exactness::kExact; }
  std::string_view contract() const override {
    return "PADV2 of a ReLU/ReLU6 output (fused or not) with a constant value <= 0, read only by a MAX_POOL_2D whose "
           "every window holds a real element, padding only H and W (a value of 0 needs no precondition)";
  }

  PassResult Apply(ir::Model& model, const PassOptions&) const override {
    PassResult result;
    GraphEdit edit(model, std::string(id()));
    const ir::Subgraph& g = edit.graph();
    const size_t count = g.ops.size();
    for (size_t i = 0; i < count; ++i) {
      const ir::Op& op = g.ops[i];
      if (op.code != tfl::BuiltinOperator_PADV2 || op.inputs.size() < 2 || op.outputs.size() != 1) continue;
      const int x = op.inputs[0];
      if (g.tensors[x].dtype != tfl::TensorType_FLOAT32) continue;
      const std::vector<int64_t> pads = ConstInts(g, op.inputs[1]);
      const int rank = g.tensors[x].rank();
      if (pads.size() != static_cast<size_t>(2 * rank)) continue;
      float value = 0.0f;
      if (op.inputs.size() > 2 && op.inputs[2] >= 0) {
        const auto c = ConstScalar(g, op.inputs[2]);
        if (!c) continue;
        value = *c;
      }
      if (!(value <= 0.0f)) continue;
      if (value != 0.0f && !MaxPoolSeesRealValues(g, op, pads)) continue;

      builder::Paddings paddings;
      for (int d = 0; d < rank; ++d)
        paddings.push_back({static_cast<int32_t>(pads[2 * d]), static_cast<int32_t>(pads[2 * d + 1])});
      const int padded = edit.b().Pad(x, paddings);
      result.sites.push_back(
          {static_cast<int>(i), "PADV2", fmt::format("PAD with 0 instead of {:g} before the max-pool", value)});
      edit.Replace(static_cast<int>(i), {padded});
    }
    edit.Commit();
    return result;
  }

 private:
  static bool MaxPoolSeesRealValues(const ir::Subgraph& g, const ir::Op& op, const std::vector<int64_t>& pads) {
    const int x = op.inputs[0];
    const int y = op.outputs[0];
    if (g.tensors[x].rank() != 4 || !NonNegative(g, x)) return false;
    // Padding batch or channels adds whole slices no window can avoid.
    if (pads[0] || pads[1] || pads[6] || pads[7]) return false;
    const int pool = SoleConsumer(g, y);
    if (pool < 0 || g.ops[pool].code != tfl::BuiltinOperator_MAX_POOL_2D || g.ops[pool].inputs.at(0) != y) return false;
    const auto* o = g.ops[pool].options.AsPool2DOptions();
    if (!o || o->stride_h <= 0 || o->stride_w <= 0) return false;
    const std::vector<int32_t>& in = g.tensors[x].shape;
    const std::vector<int32_t>& out = g.tensors[y].shape;
    return EveryWindowSeesReal(static_cast<int32_t>(pads[2]), in[1], out[1], o->filter_height, o->stride_h,
                               o->padding) &&
           EveryWindowSeesReal(static_cast<int32_t>(pads[4]), in[2], out[2], o->filter_width, o->stride_w,
                               o->padding);
  }
};

}  // namespace

const Pass& Padv2ToPad0() {
  static const Padv2ToPad0Pass pass;
  return pass;
}

}  // namespace gpuclean::rewrite::passes
