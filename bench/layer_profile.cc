#include "layer_profile.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>

#include "gpuclean/exec.h"
#include "gpuclean/format.h"

namespace gpuclean::bench {
namespace {

// Multiply-adds that touch the input along one spatial axis, summed over
// the output positions: padding and dilation taps that fall outside the
// input cost nothing (a dilated ASPP conv on a small map skips most taps).
int64_t InBoundsTaps(int in, int out, int kernel, int stride, int dilation, bool same) {
  const int64_t span = static_cast<int64_t>(out - 1) * stride + static_cast<int64_t>(kernel - 1) * dilation + 1;
  const int64_t pad = same ? std::max<int64_t>(0, (span - in) / 2) : 0;
  int64_t taps = 0;
  for (int o = 0; o < out; ++o)
    for (int k = 0; k < kernel; ++k) {
      const int64_t at = static_cast<int64_t>(o) * stride - pad + static_cast<int64_t>(k) * dilation;
      taps += at >= 0 && at < in;
    }
  return taps;
}

int64_t DotProductFlops(const ir::Subgraph& g, const ir::Op& op, const exec::Interpreter& it) {
  const auto& out = it.tensor(op.outputs[0]);
  switch (op.code) {
    case tfl::BuiltinOperator_CONV_2D:
    case tfl::BuiltinOperator_DEPTHWISE_CONV_2D: {
      const auto& x = it.tensor(op.inputs[0]).shape;  // [N, H, W, C]
      const auto& w = g.tensors[op.inputs[1]].shape;  // conv [O, kh, kw, I]; depthwise [1, kh, kw, C*m]
      int sh = 1, sw = 1, dh = 1, dw = 1;
      bool same = true;
      if (const auto* o = op.options.AsConv2DOptions()) {
        sh = o->stride_h, sw = o->stride_w, dh = o->dilation_h_factor, dw = o->dilation_w_factor;
        same = o->padding == tfl::Padding_SAME;
      } else if (const auto* d = op.options.AsDepthwiseConv2DOptions()) {
        sh = d->stride_h, sw = d->stride_w, dh = d->dilation_h_factor, dw = d->dilation_w_factor;
        same = d->padding == tfl::Padding_SAME;
      }
      const int64_t taps =
          InBoundsTaps(x[1], out.shape[1], w[1], sh, dh, same) * InBoundsTaps(x[2], out.shape[2], w[2], sw, dw, same);
      const int64_t per_tap = op.code == tfl::BuiltinOperator_CONV_2D ? int64_t{w[0]} * w[3] : int64_t{w[3]};
      return 2 * x[0] * per_tap * taps;
    }
    case tfl::BuiltinOperator_FULLY_CONNECTED: {
      const auto& w = g.tensors[op.inputs[1]].shape;  // [O, I]
      return 2 * out.num_elements() * w[1];
    }
    case tfl::BuiltinOperator_BATCH_MATMUL: {  // contraction: x's last dim, or its second last when adjointed
      const auto& x = it.tensor(op.inputs[0]).shape;
      const auto* o = op.options.AsBatchMatMulOptions();
      if (x.size() < 2) return 0;
      return 2 * out.num_elements() * (o && o->adj_x ? x[x.size() - 2] : x.back());
    }
    default: return 0;
  }
}

}  // namespace

std::vector<Layer> LargestLayers(const std::string& tflite_path, const std::vector<npy::Array>& inputs, int repeat,
                                 int threads, size_t count) {
  auto model = std::make_shared<const ir::Model>(format::ReadModel(tflite_path));
  exec::Interpreter it(model, {.threads = threads});
  for (size_t i = 0; i < inputs.size(); ++i) it.SetInput(static_cast<int>(i), inputs[i]);
  const ir::Subgraph& g = it.graph();
  std::map<int, std::vector<double>> times;
  for (int r = 0; r < repeat; ++r) {
    auto last = std::chrono::steady_clock::now();
    int last_op = -1;
    it.Invoke(
        [&](int op, int, const exec::Tensor&) {
          if (op == last_op) return;  // later outputs of the same op
          const auto now = std::chrono::steady_clock::now();
          times[op].push_back(std::chrono::duration<double, std::milli>(now - last).count());
          last = now;
          last_op = op;
        },
        exec::Tapping::kAsUntapped);
  }
  std::vector<Layer> layers;
  for (auto& [op, t] : times) {
    const int64_t flops = DotProductFlops(g, g.ops[op], it);
    if (flops == 0) continue;
    std::sort(t.begin(), t.end());
    layers.push_back({op, g.ops[op].name(), flops, t[t.size() / 2]});
  }
  std::sort(layers.begin(), layers.end(), [](const Layer& a, const Layer& b) { return a.flops > b.flops; });
  if (layers.size() > count) layers.resize(count);
  return layers;
}

}  // namespace gpuclean::bench
