// conv-winograd-split: a 3x3 stride-1 CONV_2D that ML Drift would run with
// its Winograd F(4x4, 3x3) kernels -> the same conv in groups of at most 60
// output channels (15 four-channel slices, below the 16 that select
// Winograd), concatenated on channels. On LiteRT.js 2.5.3's WebGPU backend
// the Winograd path returns unrelated numbers in fp16 (measured:
// data/compat/mldrift-webgpu@2.5.3.json, conv-3x3-winograd-fp16); the direct
// kernels are right. Every output channel is the same dot product as before,
// so the outputs are bit-identical.
#include <fmt/format.h>

#include <algorithm>

#include "rewrite/passes/passes.h"
#include "rewrite/pattern_pass.h"

namespace gpuclean::rewrite::passes {
namespace {

constexpr int kMaxGroupChannels = 60;

bool Selected(const ir::Subgraph& g, const ir::Op& op) {
  if (op.code != tfl::BuiltinOperator_CONV_2D || op.inputs.size() < 2 || op.outputs.size() != 1) return false;
  const auto* o = op.options.AsConv2DOptions();
  const int w = op.inputs[1];
  if (!o || w < 0 || g.tensors[w].rank() != 4) return false;
  const std::vector<int32_t>& f = g.tensors[w].shape;
  return o->stride_w == 1 && o->stride_h == 1 && o->dilation_w_factor == 1 && o->dilation_h_factor == 1 && f[1] == 3 &&
         f[2] == 3 && f[0] > kMaxGroupChannels;
}

class ConvWinogradSplitPass final : public OpPass {
 public:
  ConvWinogradSplitPass()
      : OpPass({"conv-winograd-split", Exactness::kExact,
                "float32 3x3 stride-1 undilated CONV_2D with > 60 output channels and constant weights (and bias): "
                "split into convs of <= 60 output channels joined by CONCATENATION on channels, each with the same "
                "padding and activation (bit-identical)"},
               {tfl::BuiltinOperator_CONV_2D}) {}

 private:
  std::optional<std::string> Visit(OpSite& site) const override {
    const ir::Op& op = site.op;
    if (!Selected(site.graph(), op)) return std::nullopt;
    const ir::Subgraph& g = site.graph();
    const int x = op.inputs[0], w = op.inputs[1], bias = op.inputs.size() > 2 ? op.inputs[2] : -1;
    std::string why;
    if (g.tensors[x].dtype != tfl::TensorType_FLOAT32)
      why = "the input is not float32";
    else if (!IsConstantValued(g, w) || (bias >= 0 && !IsConstantValued(g, bias)))
      why = "weights or bias are computed at runtime";
    if (!why.empty()) {
      site.Skip({g.tensors[op.outputs[0]].name}, why);
      return std::nullopt;
    }
    const std::vector<int32_t> f = g.tensors[w].shape;  // [O, 3, 3, I]
    const npy::Array weights = EvaluateConstant(g, w);
    const npy::Array biases = bias >= 0 ? EvaluateConstant(g, bias) : npy::Array{};
    const int out_channels = f[0];
    const int groups = (out_channels + kMaxGroupChannels - 1) / kMaxGroupChannels;
    const int per_group = std::min(kMaxGroupChannels, ((out_channels + groups - 1) / groups + 3) / 4 * 4);
    const int64_t per_channel = static_cast<int64_t>(f[1]) * f[2] * f[3];
    const auto* o = op.options.AsConv2DOptions();
    std::vector<int> parts;
    for (int first = 0; first < out_channels; first += per_group) {
      const int n = std::min(per_group, out_channels - first);
      const float* wsrc = weights.as<float>() + first * per_channel;
      const int wg = site.edit.ConstF32(fmt::format("w{}_{}", site.node, first), {n, f[1], f[2], f[3]},
                                        std::vector<float>(wsrc, wsrc + n * per_channel));
      int bg = -1;
      if (bias >= 0) {
        const float* bsrc = biases.as<float>() + first;
        bg = site.edit.ConstF32(fmt::format("b{}_{}", site.node, first), {n}, std::vector<float>(bsrc, bsrc + n));
      }
      parts.push_back(site.b().Conv2D(x, wg, bg, o->padding, 1, 1, o->fused_activation_function));
    }
    const int y = site.b().Concatenation(parts, 3);
    site.edit.Replace(site.node, {y});
    const std::string site_what = fmt::format("{} output channels -> {} convs of <= {} joined on channels",
                                              out_channels, parts.size(), per_group);
    return site_what;
  }
};

}  // namespace

const Pass& ConvWinogradSplit() {
  static const ConvWinogradSplitPass pass;
  return pass;
}

}  // namespace gpuclean::rewrite::passes
