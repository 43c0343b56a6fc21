// CONCATENATION along `axis` (negative counts from the end), then the fused
// activation on float outputs, which is what the option means. LiteRT does
// not agree with itself here: its builtin kernel refuses any activation but
// NONE at prepare, and LiteRT.js (XNNPACK) accepts the node and ignores the
// activation (measured: RELU6 left values of -8 and 8 untouched).
#include "exec/kernels/layout_util.h"

namespace gpuclean::exec::kernels {
namespace {

void CheckConcatenation(const ir::Subgraph& graph, const ir::Op& op) {
  if (op.inputs.empty()) ThrowOpUnsupported(graph, op, "needs at least one input");
  RequireMovable(graph, op, {-1});
  const auto options = OptionsOr<tfl::ConcatenationOptionsT>(op);
  const auto act = options.fused_activation_function;
  if (act != tfl::ActivationFunctionType_NONE) {
    const ir::Tensor* out = IrOutput(graph, op, 0);
    if (!IsSupportedActivation(act) || (out && out->dtype != tfl::TensorType_FLOAT32))
      ThrowOpUnsupported(graph, op, "fused activation {} on {} is not supported",
                         tfl::EnumNameActivationFunctionType(act), out ? ir::DTypeName(out->dtype) : "?");
  }
}

void EvalConcatenation(KernelContext& ctx) {
  Tensor& output = ctx.output(0);
  const auto options = OptionsOr<tfl::ConcatenationOptionsT>(ctx.op);
  const int rank = output.rank();
  const int axis = NormalizeAxisOrThrow(ctx, options.axis, rank);
  const size_t esize = ElementSize(output);
  const std::vector<int64_t> out_strides = StridesOf(output.shape);
  int64_t offset = 0;
  for (size_t k = 0; k < ctx.in.size(); ++k) {
    if (!ctx.in[k]) continue;
    const Tensor& in = *ctx.in[k];
    // LiteRT concatenates scalars into a vector.
    const std::vector<int32_t> shape = in.rank() == 0 ? std::vector<int32_t>{1} : in.shape;
    if (static_cast<int>(shape.size()) != rank)
      ThrowOpBadInput(ctx, "input {} has rank {}, the output {}", k, in.rank(), rank);
    if (offset + shape[axis] > output.shape[axis])
      ThrowOpBadInput(ctx, "inputs are longer than the output along axis {}", axis);
    CopyStrided(ctx.pool, esize, shape, in.data, StridesOf(shape), output.data + offset * out_strides[axis] * esize,
                out_strides);
    offset += shape[axis];
  }
  if (offset != output.shape[axis]) ThrowOpBadInput(ctx, "inputs do not fill the output along axis {}", axis);
  const auto act = options.fused_activation_function;
  if (act != tfl::ActivationFunctionType_NONE && output.dtype == tfl::TensorType_FLOAT32) {
    float* y = output.as<float>();
    for (int64_t i = 0, n = output.num_elements(); i < n; ++i) y[i] = ApplyActivation(y[i], act);
  }
}

}  // namespace

Kernel ConcatenationKernel() { return {CheckConcatenation, EvalConcatenation}; }

}  // namespace gpuclean::exec::kernels
