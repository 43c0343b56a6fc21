// QUANTIZE from float32 to int8, uint8 or int16 with the output's one scale
// and zero point: clamp(round(x / scale) + zero_point) to the type's range,
// round half away from zero (TfLiteRound; reference AffineQuantize in
// tflite/kernels/internal/reference/quantize.h). Per-channel outputs and
// requantizing an already quantized input are refused by name.
#include <algorithm>
#include <cmath>
#include <limits>

#include "exec/kernels/layout_util.h"

namespace gpuclean::exec::kernels {
namespace {

void CheckQuantize(const ir::Subgraph& graph, const ir::Op& op) {
  RequireInputCount(graph, op, 1, 1);
  RequireInputDtype(graph, op, 0, {tfl::TensorType_FLOAT32});
  RequireOutputDtype(graph, op, 0, {tfl::TensorType_INT8, tfl::TensorType_UINT8, tfl::TensorType_INT16});
  const ir::Tensor* out = IrOutput(graph, op, 0);
  if (!out) ThrowOpUnsupported(graph, op, "output 0 is missing");
  if (out->quant.scale.size() != 1)
    ThrowOpUnsupported(graph, op, "output '{}' has {} scales; only one scale per tensor is handled", out->name,
                       out->quant.scale.size());
  if (!(out->quant.scale[0] > 0) || !std::isfinite(out->quant.scale[0]))
    ThrowOpUnsupported(graph, op, "output '{}' has scale {}, not a positive number", out->name, out->quant.scale[0]);
}

template <typename Q>
void AffineQuantize(KernelContext& ctx, float scale, int64_t zero_point) {
  const float* in = ctx.input(0).as<const float>();
  Q* out = ctx.output(0).as<Q>();
  constexpr auto lo = static_cast<double>(std::numeric_limits<Q>::lowest());
  constexpr auto hi = static_cast<double>(std::numeric_limits<Q>::max());
  const int64_t n = ctx.output(0).num_elements();
  for (int64_t i = 0; i < n; ++i) {
    const double q = std::round(static_cast<double>(in[i] / scale)) + static_cast<double>(zero_point);
    out[i] = static_cast<Q>(std::isnan(q) ? zero_point : std::clamp(q, lo, hi));
  }
}

void EvalQuantize(KernelContext& ctx) {
  const ir::Quantization& q = ctx.graph.tensors[ctx.op.outputs[0]].quant;
  const int64_t zero_point = q.zero_point.empty() ? 0 : q.zero_point[0];
  if (ctx.output(0).num_elements() != ctx.input(0).num_elements())
    ThrowOpBadInput(ctx, "output shape differs from the input's");
  switch (ctx.output(0).dtype) {
    case tfl::TensorType_INT8: AffineQuantize<int8_t>(ctx, q.scale[0], zero_point); break;
    case tfl::TensorType_UINT8: AffineQuantize<uint8_t>(ctx, q.scale[0], zero_point); break;
    default: AffineQuantize<int16_t>(ctx, q.scale[0], zero_point); break;
  }
}

}  // namespace

Kernel QuantizeKernel() { return {CheckQuantize, EvalQuantize}; }

}  // namespace gpuclean::exec::kernels
