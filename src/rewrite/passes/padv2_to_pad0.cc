// padv2-to-pad0: PADV2(x, c) feeding only a MAX_POOL_2D, which the GPU
// delegates reject for c != 0. Converters pad with -inf (or -1e9) so padding
// never wins a max. Two exact ways out:
//
//  - x >= 0 (it comes out of a ReLU) and every pooling window holds a real
//    element: the window max is >= 0, so padding with 0 cannot change it
//    either -> PAD(x) with zeros, same pool.
//  - c is -inf (or the lowest float) and the pool is VALID over exactly the
//    rows and columns a SAME pool of x would add: LiteRT's SAME max pool
//    skips its padded cells, which is what a -inf cell amounts to -> one SAME
//    MAX_POOL_2D on x, whatever sign x has. A finite c is left: it differs
//    wherever a whole window of x lies below c.
#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "gpuclean/shapes.h"

#include "rewrite/passes/passes.h"
#include "rewrite/pattern_pass.h"

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
    case tfl::BuiltinOperator_RELU_0_TO_1: return true;
    default: break;
  }
  const auto act = FusedActivation(op);
  return act && (*act == tfl::ActivationFunctionType_RELU || *act == tfl::ActivationFunctionType_RELU6);
}

// Along one spatial axis of the padded map: every pooling window overlaps
// the real rows [before, before + real).
bool EveryWindowSeesReal(int32_t before, int32_t real, int32_t padded, int32_t filter, int32_t stride,
                         tfl::Padding pool_padding) {
  const int32_t out = ir::WindowOutputSize(pool_padding, padded, filter, stride);
  const int32_t pool_before = ir::ComputeWindowPadding(pool_padding, padded, filter, stride, 1, out).before;
  for (int32_t o = 0; o < out; ++o) {
    // SAME's own padding is ignored by the max, so clip to the map.
    const int32_t lo = std::max(0, o * stride - pool_before);
    const int32_t hi = std::min(padded, o * stride - pool_before + filter);
    if (std::max(lo, before) >= std::min(hi, before + real)) return false;
  }
  return true;
}

// The MAX_POOL_2D reading PADV2 output `y` as its data input, its only reader.
int SolePool(const ir::Subgraph& g, int y) {
  const int pool = SoleConsumer(g, y);
  if (pool < 0 || g.ops[pool].code != tfl::BuiltinOperator_MAX_POOL_2D || g.ops[pool].inputs.at(0) != y) return -1;
  const auto* o = g.ops[pool].options.AsPool2DOptions();
  return o && o->stride_h > 0 && o->stride_w > 0 && o->filter_height > 0 && o->filter_width > 0 ? pool : -1;
}

std::string PadsText(const std::vector<int64_t>& pads) {
  return fmt::format("H ({},{}) W ({},{})", pads[2], pads[3], pads[4], pads[5]);
}

// Why PAD with 0 would change the pool's result; empty when it cannot.
std::string WhyNotZeroPad(const ir::Subgraph& g, const ir::Op& op, const std::vector<int64_t>& pads, float value) {
  if (!(value <= 0.0f)) return fmt::format("the pad value {:g} is not <= 0", value);
  if (value == 0.0f) return "";
  const int x = op.inputs[0];
  if (g.tensors[x].rank() != 4) return "the padded tensor is not 4-D";
  if (!NonNegative(g, x)) return "its input does not come from a ReLU/ReLU6, so zeros could win the max";
  // Padding batch or channels adds whole slices no window can avoid.
  if (pads[0] || pads[1] || pads[6] || pads[7]) return "it pads batch or channels";
  const int pool = SolePool(g, op.outputs[0]);
  if (pool < 0) return "it is not read by one MAX_POOL_2D alone";
  const auto* o = g.ops[pool].options.AsPool2DOptions();
  const std::vector<int32_t>& in = g.tensors[x].shape;
  const std::vector<int32_t>& out = g.tensors[op.outputs[0]].shape;
  if (!EveryWindowSeesReal(static_cast<int32_t>(pads[2]), in[1], out[1], o->filter_height, o->stride_h, o->padding) ||
      !EveryWindowSeesReal(static_cast<int32_t>(pads[4]), in[2], out[2], o->filter_width, o->stride_w, o->padding))
    return "a pooling window holds only padding";
  return "";
}

// Why one SAME pool on the unpadded input would differ; empty when it cannot.
std::string WhyNotSamePool(const ir::Subgraph& g, const ir::Op& op, const std::vector<int64_t>& pads, float value) {
  if (!(value <= std::numeric_limits<float>::lowest()))
    return fmt::format("the pad value {:g} is finite (SAME skips padding, which equals only -inf padding)", value);
  const int x = op.inputs[0];
  if (g.tensors[x].rank() != 4) return "the padded tensor is not 4-D";
  if (pads[0] || pads[1] || pads[6] || pads[7]) return "it pads batch or channels";
  const int pool = SolePool(g, op.outputs[0]);
  if (pool < 0) return "it is not read by one MAX_POOL_2D alone";
  const auto* o = g.ops[pool].options.AsPool2DOptions();
  if (o->padding != tfl::Padding_VALID) return "the max pool is not VALID";
  const std::vector<int32_t>& in = g.tensors[x].shape;
  const std::vector<int32_t>& padded = g.tensors[op.outputs[0]].shape;
  // Per spatial axis: the VALID windows over the padded map are SAME's
  // windows over x when both start at the same offset and count the same;
  // padding past the last window is never read.
  bool matches = true;
  int32_t same_before[2];
  for (int axis = 0; axis < 2; ++axis) {
    const int32_t n = in[1 + axis], filter = axis ? o->filter_width : o->filter_height;
    const int32_t stride = axis ? o->stride_w : o->stride_h;
    const int32_t same_out = ir::WindowOutputSize(tfl::Padding_SAME, n, filter, stride);
    same_before[axis] = ir::ComputeWindowPadding(tfl::Padding_SAME, n, filter, stride, 1, same_out).before;
    matches = matches && pads[2 + 2 * axis] == same_before[axis] && padded[1 + axis] >= filter &&
              ir::WindowOutputSize(tfl::Padding_VALID, padded[1 + axis], filter, stride) == same_out;
  }
  if (!matches)
    return fmt::format("its padding {} is not SAME's for a {}x{} stride-{}x{} pool on {}x{} (H ({},..) W ({},..))",
                       PadsText(pads), o->filter_height, o->filter_width, o->stride_h, o->stride_w, in[1], in[2],
                       same_before[0], same_before[1]);
  return "";
}

// What the rewrite needs: the paddings, the pad value and which way out.
struct Padv2Match {
  std::vector<int64_t> pads;
  float value = 0.0f;
  bool same_pool = false;  // else PAD with zeros
};

class Padv2ToPad0Pass final : public PatternPass<Padv2Match> {
 public:
  Padv2ToPad0Pass()
      : PatternPass(
            {"padv2-to-pad0", Exactness::kExact,
             "PADV2 with a constant value read only by a MAX_POOL_2D, padding only H and W: PAD with 0 when its input "
             "comes from a ReLU/ReLU6 (fused or not), the value is <= 0 and every window holds a real element (a value "
             "of 0 needs none of this); else one SAME MAX_POOL_2D when the value is -inf and the pool is VALID over "
             "exactly SAME's padding"},
            {tfl::BuiltinOperator_PADV2}) {}

 private:
  std::optional<Padv2Match> Match(const OpSite& site) const override {
    const ir::Op& op = site.op;
    if (op.inputs.size() < 2 || op.outputs.size() != 1) return std::nullopt;
    const ir::Subgraph& g = site.graph();
    const int x = op.inputs[0];
    auto skip = [&](const std::string& why) {
      site.Skip({g.tensors[x].name, g.tensors[op.outputs[0]].name}, why);
      return std::nullopt;
    };
    if (g.tensors[x].dtype != tfl::TensorType_FLOAT32) return skip("the padded tensor is not float32");
    Padv2Match found;
    found.pads = ConstInts(g, op.inputs[1]);
    const int rank = g.tensors[x].rank();
    if (found.pads.size() != static_cast<size_t>(2 * rank)) return skip("the paddings are not a constant");
    if (op.inputs.size() > 2 && op.inputs[2] >= 0) {
      const auto c = ConstScalar(g, op.inputs[2]);
      if (!c) return skip("the pad value is not a constant");
      found.value = *c;
    }
    const std::string zero_pad = WhyNotZeroPad(g, op, found.pads, found.value);
    if (zero_pad.empty()) return found;
    const std::string same_pool = WhyNotSamePool(g, op, found.pads, found.value);
    if (!same_pool.empty()) return skip(fmt::format("zero padding: {}; SAME pool: {}", zero_pad, same_pool));
    found.same_pool = true;
    return found;
  }

  std::string Rewrite(OpSite& site, const Padv2Match& found) const override {
    const int x = site.op.inputs[0];
    const std::vector<int64_t>& pads = found.pads;
    if (!found.same_pool) {
      builder::Paddings paddings;
      for (int d = 0; d < site.tensor(x).rank(); ++d)
        paddings.push_back({static_cast<int32_t>(pads[2 * d]), static_cast<int32_t>(pads[2 * d + 1])});
      site.edit.Replace(site.node, {site.b().Pad(x, paddings)});
      return fmt::format("PAD with 0 instead of {:g} before the max-pool", found.value);
    }
    const int pool = SolePool(site.graph(), site.op.outputs[0]);
    // A copy: the builder appends ops.
    const tfl::Pool2DOptionsT o = *site.graph().ops[pool].options.AsPool2DOptions();
    const int pooled = site.b().MaxPool2D(x, tfl::Padding_SAME, o.stride_w, o.stride_h, o.filter_width, o.filter_height,
                                          o.fused_activation_function);
    site.edit.Replace(pool, {pooled});
    return fmt::format("PADV2 {} of {:g} + VALID max-pool -> one SAME max-pool", PadsText(pads), found.value);
  }
};

}  // namespace

const Pass& Padv2ToPad0() {
  static const Padv2ToPad0Pass pass;
  return pass;
}

}  // namespace gpuclean::rewrite::passes
