// FULLY_CONNECTED: input [..., K] read as M = elements / K rows, weights
// [N, K], optional bias [N]; output [M, N] (or the input's leading dims with
// keep_num_dims, which only shapes the output). Fused activation clamp.
// float32 only: int8 weights (hybrid) and shuffled weight formats are refused.
#include "exec/kernels/conv_util.h"
#include "exec/kernels/fp16_compute.h"

namespace gpuclean::exec::kernels {
namespace {

void CheckFullyConnected(const ir::Subgraph& graph, const ir::Op& op) {
  conv::RequireFloat32(graph, op);
  const auto* o = op.options.AsFullyConnectedOptions();
  if (o && o->weights_format != tfl::FullyConnectedOptionsWeightsFormat_DEFAULT)
    conv::ThrowUnsupportedAttr(graph, op, "shuffled weights format");
  if (conv::InputRank(graph, op, 1) != 2) conv::ThrowBadInput(graph, op, "weights must have rank 2");
  if (conv::InputRank(graph, op, 2) > 1) conv::ThrowBadInput(graph, op, "bias must have rank 1");
}

void EvalFullyConnected(KernelContext& ctx) {
  const auto* o = ctx.op.options.AsFullyConnectedOptions();
  const Tensor& in = ctx.input(0);
  const Tensor& w = ctx.input(1);
  const float* bias = ctx.has_input(2) ? ctx.input(2).as<float>() : nullptr;
  Tensor& out = ctx.output(0);
  const int n = w.dim(0), k = w.dim(1);
  const int64_t m = k > 0 ? in.num_elements() / k : 0;
  const conv::Clamp clamp = conv::ActivationClamp(o ? o->fused_activation_function : tfl::ActivationFunctionType_NONE);
  if (fp16::DotProductsInHalf(ctx)) {
    fp16::Gemm(ctx.pool, m, n, k, {in.as<float>(), k, 1}, {w.as<float>(), k, 1}, bias, clamp, out.as<float>(), n);
    return;
  }
  // A few rows: dot products over the weights in place beat any packing.
  if (m < 4) {
    conv::Gemm(ctx.pool, m, n, k, {in.as<float>(), k, 1}, {w.as<float>(), k, 1}, bias, clamp, out.as<float>(), n);
    return;
  }
  if (conv::OneDnnFullyConnected(ctx, m, n, k, in.as<float>(), w.as<float>(), bias, clamp, out.as<float>())) return;
  conv::PackedB scratch;
  const conv::PackedB& packed = conv::PackedWeights(ctx, 1, 2, 0, {w.as<float>(), k, 1}, n, k, bias, &scratch);
  conv::Gemm(ctx.pool, m, {in.as<float>(), k, 1}, packed, clamp, out.as<float>(), n);
}

}  // namespace

Kernel FullyConnectedKernel() { return {CheckFullyConnected, EvalFullyConnected}; }

}  // namespace gpuclean::exec::kernels
