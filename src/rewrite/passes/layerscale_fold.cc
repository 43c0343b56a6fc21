// layerscale-fold: FULLY_CONNECTED followed by MUL with a constant gamma
// over the output channels (LayerScale) -> gamma folded into the FC's weight
// rows and bias. The delegate lays a 2-D FC output out as {N,1,1,C} and the
// broadcast MUL as {1,1,N,C}; without the MUL there is nothing to conflict.
// (W x + b) * g == (g . W) x + g . b row by row, so the pass is exact up to
// float rounding.
#include <fmt/format.h>

#include <algorithm>

#include "rewrite/passes/passes.h"
#include "rewrite/pattern_pass.h"

namespace gpuclean::rewrite::passes {
namespace {

using tfl::ActivationFunctionType;

// gamma's values when it broadcasts along the last axis only: one value per
// output channel (or one for all), every other dimension 1.
std::vector<float> ChannelGamma(const ir::Subgraph& g, int gamma, int channels) {
  const ir::Tensor& t = g.tensors.at(gamma);
  if (t.dtype != tfl::TensorType_FLOAT32 && t.dtype != tfl::TensorType_FLOAT16) return {};
  for (size_t d = 0; d + 1 < t.shape.size(); ++d)
    if (t.shape[d] != 1) return {};
  std::vector<float> v = ConstFloats(g, gamma);
  if (v.size() == 1) v.assign(channels, v[0]);
  if (static_cast<int>(v.size()) != channels) return {};
  return v;
}

// The activation the folded FC carries, or nullopt when the pair does not
// commute with the scaling. relu(z) * g == relu(z * g) only for g > 0.
std::optional<ActivationFunctionType> FoldedActivation(ActivationFunctionType fc_act, ActivationFunctionType mul_act,
                                                       bool gamma_positive) {
  const bool fc_relu = fc_act == tfl::ActivationFunctionType_RELU;
  if (fc_act != tfl::ActivationFunctionType_NONE && !(fc_relu && gamma_positive)) return std::nullopt;
  switch (mul_act) {
    case tfl::ActivationFunctionType_NONE: return fc_act;
    case tfl::ActivationFunctionType_RELU: return tfl::ActivationFunctionType_RELU;
    case tfl::ActivationFunctionType_RELU6:
    case tfl::ActivationFunctionType_RELU_N1_TO_1:
      // A clamp after the product; only safe when nothing ran before it.
      if (fc_act == tfl::ActivationFunctionType_NONE) return mul_act;
      return std::nullopt;
    default: return std::nullopt;
  }
}

// The FC's input and its weights and bias with gamma folded in.
struct Folded {
  int x = -1, gamma = -1;
  int out_channels = 0, in_channels = 0;
  std::vector<float> w, bv;
  ActivationFunctionType act = tfl::ActivationFunctionType_NONE;
  bool keep_num_dims = false;
  std::string base;  // the weights' name
};

class LayerScaleFoldPass final : public PatternPass<Folded> {
 public:
  LayerScaleFoldPass()
      : PatternPass({"layerscale-fold", Exactness::kExact,
                     "FULLY_CONNECTED (constant float weights and bias, default weight format, activation NONE or RELU "
                     "with gamma > 0) whose only consumer is MUL by a constant per-channel gamma"},
                    {tfl::BuiltinOperator_MUL}) {}

 private:
  std::optional<Folded> Match(const OpSite& site) const override {
    const ir::Subgraph& g = site.graph();
    const ir::Op& mul = site.op;
    if (mul.inputs.size() != 2) return std::nullopt;
    for (int side = 0; side < 2; ++side) {
      const int y = mul.inputs[side], gamma = mul.inputs[1 - side];
      if (y < 0 || gamma < 0 || y == gamma) continue;
      const int fc_node = g.Producer(y);
      if (fc_node < 0 || g.ops[fc_node].code != tfl::BuiltinOperator_FULLY_CONNECTED) continue;
      if (SoleConsumer(g, y) != site.node) continue;
      const ir::Op& fc = g.ops[fc_node];
      const auto* options = fc.options.AsFullyConnectedOptions();
      if (!options || options->weights_format != tfl::FullyConnectedOptionsWeightsFormat_DEFAULT) continue;
      if (fc.inputs.size() < 2 || fc.outputs.size() != 1) continue;
      const int x = fc.inputs[0], weights = fc.inputs[1];
      const int bias = fc.inputs.size() > 2 ? fc.inputs[2] : -1;
      if (g.tensors[x].dtype != tfl::TensorType_FLOAT32 || g.tensors[y].dtype != tfl::TensorType_FLOAT32) continue;
      const ir::Tensor& wt = g.tensors[weights];
      if (wt.rank() != 2) continue;
      Folded f;
      f.w = ConstFloats(g, weights);
      f.out_channels = wt.shape[0], f.in_channels = wt.shape[1];
      const int out_channels = f.out_channels, in_channels = f.in_channels;
      if (f.w.size() != static_cast<size_t>(out_channels) * in_channels) continue;
      f.bv.assign(out_channels, 0.0f);
      if (bias >= 0) {
        f.bv = ConstFloats(g, bias);
        if (static_cast<int>(f.bv.size()) != out_channels) continue;
      }
      const std::vector<float> gv = ChannelGamma(g, gamma, out_channels);
      if (gv.empty()) continue;
      const bool positive = std::all_of(gv.begin(), gv.end(), [](float v) { return v > 0; });
      const auto* mul_options = mul.options.AsMulOptions();
      const auto act = FoldedActivation(
          options->fused_activation_function,
          mul_options ? mul_options->fused_activation_function : tfl::ActivationFunctionType_NONE, positive);
      if (!act) continue;

      for (int o = 0; o < out_channels; ++o) {
        for (int k = 0; k < in_channels; ++k) f.w[static_cast<size_t>(o) * in_channels + k] *= gv[o];
        f.bv[o] *= gv[o];
      }
      f.x = x;
      f.gamma = gamma;
      f.act = *act;
      f.keep_num_dims = options->keep_num_dims;
      f.base = wt.name;
      return f;
    }
    return std::nullopt;
  }

  std::string Rewrite(OpSite& site, const Folded& f) const override {
    GraphEdit& edit = site.edit;
    const builder::Shape out_shape = site.tensor(site.op.outputs[0]).shape;
    const int w2 = edit.ConstF32(fmt::format("{}_scaled_{}", f.base, site.node), {f.out_channels, f.in_channels}, f.w);
    const int b2 = edit.ConstF32(fmt::format("{}_bias_scaled_{}", f.base, site.node), {f.out_channels}, f.bv);
    int folded = edit.b().FullyConnected(f.x, w2, b2, f.act, f.keep_num_dims);
    // A [1,1,C] gamma lifts the MUL's output above the FC's rank.
    if (site.tensor(folded).shape != out_shape) folded = edit.b().Reshape(folded, out_shape);
    edit.Replace(site.node, {folded});
    return fmt::format("gamma {} folded into FULLY_CONNECTED '{}'", ir::FormatShape(site.tensor(f.gamma).shape),
                       f.base);
  }
};

}  // namespace

const Pass& LayerScaleFold() {
  static const LayerScaleFoldPass pass;
  return pass;
}

}  // namespace gpuclean::rewrite::passes
