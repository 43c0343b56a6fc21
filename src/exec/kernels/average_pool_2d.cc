// AVERAGE_POOL_2D: NHWC float32, the mean of each window over its in-bounds elements only (SAME padding does not count,
// as in LiteRT), then the fused activation clamp.
#include "exec/kernels/conv_util.h"

namespace gpuclean::exec::kernels {
namespace {

void Check(const ir::Subgraph& graph, const ir::Op& op) {
  conv::RequireFloat32(graph, op);
  const auto* o = op.options.AsPool2DOptions();
  if (!o) conv::ThrowBadInput(graph, op, "missing Pool2DOptions");
  if (conv::InputRank(graph, op, 0) != 4) conv::ThrowUnsupportedAttr(graph, op, "input of rank other than 4");
  if (o->stride_w <= 0 || o->stride_h <= 0 || o->filter_width <= 0 || o->filter_height <= 0)
    conv::ThrowBadInput(graph, op, "strides and filter sizes must be positive");
}

void Eval(KernelContext& ctx) {
  const auto& o = *ctx.op.options.AsPool2DOptions();
  const Tensor& in = ctx.input(0);
  Tensor& out = ctx.output(0);
  if (out.num_elements() == 0) return;
  conv::PoolGeometry g;
  g.batch = in.dim(0);
  g.in_h = in.dim(1);
  g.in_w = in.dim(2);
  g.c = in.dim(3);
  g.out_h = out.dim(1);
  g.out_w = out.dim(2);
  g.fh = o.filter_height;
  g.fw = o.filter_width;
  g.stride_h = o.stride_h;
  g.stride_w = o.stride_w;
  g.pad_top = conv::PaddingBefore(g.in_h, g.fh, g.stride_h, 1, g.out_h);
  g.pad_left = conv::PaddingBefore(g.in_w, g.fw, g.stride_w, 1, g.out_w);
  // fp16-compute keeps this accumulation in float: GPU pooling shaders sum
  // the window in a float accumulator (docs/numerics.md); models that pool
  // whole 128x128 maps (selfie segmentation) run correctly on half GPUs.
  conv::Pool2D(ctx.pool, in.as<float>(), g, /*max=*/false, conv::ActivationClamp(o.fused_activation_function),
               out.as<float>());
}

}  // namespace

Kernel AveragePool2DKernel() { return {Check, Eval}; }

}  // namespace gpuclean::exec::kernels
