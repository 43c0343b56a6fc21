// LOG_SOFTMAX over the last axis: x - max - log(sum(exp(x - max))), as
// LiteRT's float kernel (no beta).
#include <cmath>

#include "exec/kernels/fp16_compute.h"
#include "exec/kernels/layout_util.h"

namespace gpuclean::exec::kernels {
namespace {

void CheckLogSoftmax(const ir::Subgraph& graph, const ir::Op& op) {
  RequireInputCount(graph, op, 1, 1);
  RequireDtypes(graph, op, {tfl::TensorType_FLOAT32});
  const ir::Tensor* in = IrInput(graph, op, 0);
  if (in && in->rank() < 1) ThrowOpUnsupported(graph, op, "input must have rank >= 1, got a scalar");
}

void EvalLogSoftmax(KernelContext& ctx) {
  const Tensor& input = ctx.input(0);
  Tensor& output = ctx.output(0);
  const int64_t depth = input.rank() == 0 ? 1 : input.dim(-1);
  if (depth == 0) return;
  const int64_t rows = input.num_elements() / depth;
  const float* in = input.as<const float>();
  float* out = output.as<float>();
  ForEachRow(ctx.pool, rows, depth, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const float* x = in + r * depth;
      float* y = out + r * depth;
      float max = std::numeric_limits<float>::lowest();
      for (int64_t c = 0; c < depth; ++c) max = std::max(max, x[c]);
      // Accumulation: the sum of exponentials.
      float sum = 0.0f;
      if (fp16::Active(ctx)) {
        fp16::LaneSum half;
        for (int64_t c = 0; c < depth; ++c) half.Add(fp16::Round(std::exp(x[c] - max)));
        sum = half.Total();
      } else {
        for (int64_t c = 0; c < depth; ++c) sum += std::exp(x[c] - max);
      }
      const float log_sum = std::log(sum);
      for (int64_t c = 0; c < depth; ++c) y[c] = x[c] - max - log_sum;
    }
  });
}

}  // namespace

Kernel LogSoftmaxKernel() { return {CheckLogSoftmax, EvalLogSoftmax}; }

}  // namespace gpuclean::exec::kernels
