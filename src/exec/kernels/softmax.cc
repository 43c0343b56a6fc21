// SOFTMAX over the last axis: exp((x - max) * beta) / sum, as LiteRT's float
// kernel (beta comes from the options; a model without options has beta 0).
#include <cmath>

#include "exec/kernels/fp16_compute.h"
#include "exec/kernels/layout_util.h"

namespace gpuclean::exec::kernels {
namespace {

void CheckSoftmax(const ir::Subgraph& graph, const ir::Op& op) {
  RequireInputCount(graph, op, 1, 1);
  RequireDtypes(graph, op, {tfl::TensorType_FLOAT32});
  const ir::Tensor* in = IrInput(graph, op, 0);
  if (in && in->rank() < 1) ThrowOpUnsupported(graph, op, "input must have rank >= 1, got a scalar");
}

void EvalSoftmax(KernelContext& ctx) {
  const Tensor& input = ctx.input(0);
  Tensor& output = ctx.output(0);
  const float beta = OptionsOr<tfl::SoftmaxOptionsT>(ctx.op).beta;
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
      if (fp16::Active(ctx)) {
        fp16::LaneSum half;
        for (int64_t c = 0; c < depth; ++c) {
          y[c] = fp16::Round(std::exp((x[c] - max) * beta));
          half.Add(y[c]);
        }
        const float total = half.Total();
        for (int64_t c = 0; c < depth; ++c) y[c] = fp16::Round(y[c] / total);
        continue;
      }
      // Accumulation: the softmax denominator.
      float sum = 0.0f;
      for (int64_t c = 0; c < depth; ++c) {
        const float e = std::exp((x[c] - max) * beta);
        y[c] = e;
        sum += e;
      }
      for (int64_t c = 0; c < depth; ++c) y[c] = y[c] / sum;
    }
  });
}

}  // namespace

Kernel SoftmaxKernel() { return {CheckSoftmax, EvalSoftmax}; }

}  // namespace gpuclean::exec::kernels
