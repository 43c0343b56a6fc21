// TRANSPOSE_CONV: inputs output_shape (int32 [4]), weights [O, KH, KW, I],
// input [N, H, W, I], optional bias [O]; SAME/VALID padding, strides, fused
// activation clamp (op version 4+). Padding follows LiteRT: it is the padding
// of the forward convolution from the output to a ceil(out/stride) (SAME) or
// (out - k + stride)/stride (VALID) sized map, put before the first element
// (TFLite transpose_conv.cc with ComputePaddingHeightWidth).
#include "exec/kernels/conv_util.h"
#include "exec/kernels/fp16_compute.h"
#include "gpuclean/shapes.h"

namespace gpuclean::exec::kernels {
namespace {

void CheckTransposeConv(const ir::Subgraph& graph, const ir::Op& op) {
  const auto* o = op.options.AsTransposeConvOptions();
  if (!o) conv::ThrowBadInput(graph, op, "missing TransposeConvOptions");
  if (op.inputs.size() < 3) conv::ThrowBadInput(graph, op, "needs output_shape, weights and input");
  for (size_t i = 1; i < op.inputs.size(); ++i) {
    if (op.inputs[i] < 0) continue;
    const ir::DType d = graph.tensors[op.inputs[i]].dtype;
    if (d != tfl::TensorType_FLOAT32) ThrowUnsupportedDtype(graph, op, d);
  }
  for (int32_t t : op.outputs)
    if (graph.tensors[t].dtype != tfl::TensorType_FLOAT32) ThrowUnsupportedDtype(graph, op, graph.tensors[t].dtype);
  if (conv::InputRank(graph, op, 1) != 4 || conv::InputRank(graph, op, 2) != 4)
    conv::ThrowUnsupportedAttr(graph, op, "weights or input of rank other than 4");
  if (o->stride_w <= 0 || o->stride_h <= 0) conv::ThrowBadInput(graph, op, "strides must be positive");
}

void EvalTransposeConv(KernelContext& ctx) {
  const auto& o = *ctx.op.options.AsTransposeConvOptions();
  const Tensor& w = ctx.input(1);
  const Tensor& in = ctx.input(2);
  const float* bias = ctx.has_input(3) ? ctx.input(3).as<float>() : nullptr;
  Tensor& out = ctx.output(0);
  if (out.num_elements() == 0) return;
  conv::TransposeConvGeometry g;
  g.batch = in.dim(0);
  g.in_h = in.dim(1);
  g.in_w = in.dim(2);
  g.in_c = in.dim(3);
  g.out_h = out.dim(1);
  g.out_w = out.dim(2);
  g.out_c = out.dim(3);
  g.kh = w.dim(1);
  g.kw = w.dim(2);
  g.stride_h = o.stride_h;
  g.stride_w = o.stride_w;
  g.pad_top =
      conv::PaddingBefore(g.out_h, g.kh, g.stride_h, 1, ir::WindowOutputSize(o.padding, g.out_h, g.kh, g.stride_h));
  g.pad_left =
      conv::PaddingBefore(g.out_w, g.kw, g.stride_w, 1, ir::WindowOutputSize(o.padding, g.out_w, g.kw, g.stride_w));
  (fp16::DotProductsInHalf(ctx) ? fp16::TransposeConv : conv::TransposeConv)(
      ctx.pool, in.as<float>(), w.as<float>(), bias, g, conv::ActivationClamp(o.fused_activation_function),
      out.as<float>());
}

}  // namespace

Kernel TransposeConvKernel() { return {CheckTransposeConv, EvalTransposeConv}; }

}  // namespace gpuclean::exec::kernels
