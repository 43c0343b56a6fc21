#include "layer_profile.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>

#include "gpuclean/exec.h"
#include "gpuclean/format.h"

namespace gpuclean::bench {
namespace {

int64_t DotProductFlops(const ir::Subgraph& g, const ir::Op& op, const exec::Interpreter& it) {
  const auto& out = it.tensor(op.outputs[0]);
  switch (op.code) {
    case tfl::BuiltinOperator_CONV_2D: {
      const auto& w = g.tensors[op.inputs[1]].shape;  // [O, kh, kw, I]
      return 2 * out.num_elements() * w[1] * w[2] * w[3];
    }
    case tfl::BuiltinOperator_DEPTHWISE_CONV_2D: {
      const auto& w = g.tensors[op.inputs[1]].shape;  // [1, kh, kw, C*m]
      return 2 * out.num_elements() * w[1] * w[2];
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
    it.Invoke([&](int op, int, const exec::Tensor&) {
      if (op == last_op) return;  // later outputs of the same op
      const auto now = std::chrono::steady_clock::now();
      times[op].push_back(std::chrono::duration<double, std::milli>(now - last).count());
      last = now;
      last_op = op;
    });
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
