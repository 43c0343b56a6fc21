// L2_NORMALIZATION over the last axis: x / max(sqrt(sum(x^2)), 1e-6), as
// LiteRT's float kernel. LiteRT rejects a fused activation other than NONE.
#include <cmath>

#include "exec/kernels/fp16_compute.h"
#include "exec/kernels/layout_util.h"

namespace gpuclean::exec::kernels {
namespace {

constexpr float kEpsilon = 1e-6f;

void CheckL2Normalization(const ir::Subgraph& graph, const ir::Op& op) {
  RequireInputCount(graph, op, 1, 1);
  RequireDtypes(graph, op, {tfl::TensorType_FLOAT32});
  const ir::Tensor* in = IrInput(graph, op, 0);
  if (in && in->rank() < 1) ThrowOpUnsupported(graph, op, "input must have rank >= 1, got a scalar");
  const auto act = OptionsOr<tfl::L2NormOptionsT>(op).fused_activation_function;
  if (act != tfl::ActivationFunctionType_NONE)
    ThrowOpUnsupported(graph, op, "fused activation {} is not supported (LiteRT accepts only NONE)",
                       tfl::EnumNameActivationFunctionType(act));
}

void EvalL2Normalization(KernelContext& ctx) {
  const Tensor& input = ctx.input(0);
  Tensor& output = ctx.output(0);
  const int64_t depth = input.dim(-1);
  if (depth == 0) return;
  const int64_t rows = input.num_elements() / depth;
  const float* in = input.as<const float>();
  float* out = output.as<float>();
  ForEachRow(ctx.pool, rows, depth, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const float* x = in + r * depth;
      float* y = out + r * depth;
      // Accumulation: the squared norm.
      float squared = 0.0f;
      if (fp16::Active(ctx)) {
        fp16::LaneSum half;  // overflows once the squared norm passes 65504
        for (int64_t c = 0; c < depth; ++c) half.Add(fp16::Round(x[c] * x[c]));
        squared = half.Total();
      } else {
        for (int64_t c = 0; c < depth; ++c) squared += x[c] * x[c];
      }
      const float norm = std::max(std::sqrt(squared), kEpsilon);
      for (int64_t c = 0; c < depth; ++c) y[c] = x[c] / norm;
    }
  });
}

}  // namespace

Kernel L2NormalizationKernel() { return {CheckL2Normalization, EvalL2Normalization}; }

}  // namespace gpuclean::exec::kernels
