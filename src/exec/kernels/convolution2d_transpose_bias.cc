// Convolution2DTransposeBias (MediaPipe custom op): input [N, H, W, I],
// weights [O, KH, KW, I], bias [O]. custom_options is a raw
// TfLiteTransposeConvParams {padding, stride_width, stride_height} (12 bytes,
// TfLitePadding: 1 SAME, 2 VALID), as in selfie_segmentation.tflite.
//
// MediaPipe's kernel (transpose_conv_bias.cc) sizes the output as
// stride*(in-1) + k - p with p = SAME ? max(0, k - (in-1)%stride - 1) : 0 and
// pads p/2 before; XNNPACK (what LiteRT.js runs) gives in*stride outputs with
// (k - stride)/2 before. Both are total/2 with total = (in-1)*stride + k - out,
// so the padding is derived from the real output size.
#include "exec/kernels/conv_util.h"
#include "exec/kernels/fp16_compute.h"
#include "gpuclean/shapes.h"

namespace gpuclean::exec::kernels {
namespace {

void CheckConvolution2dTransposeBias(const ir::Subgraph& graph, const ir::Op& op) {
  conv::RequireFloat32(graph, op);
  if (op.inputs.size() != 3) conv::ThrowBadInput(graph, op, "needs input, weights and bias");
  if (conv::InputRank(graph, op, 0) != 4 || conv::InputRank(graph, op, 1) != 4)
    conv::ThrowBadInput(graph, op, "input and weights must have rank 4");
  const auto o = ir::DecodeMediaPipeTransposeConvOptions(op.custom_options);
  if (o.stride_w <= 0 || o.stride_h <= 0) conv::ThrowBadInput(graph, op, "strides must be positive");
}

void EvalConvolution2dTransposeBias(KernelContext& ctx) {
  const auto o = ir::DecodeMediaPipeTransposeConvOptions(ctx.op.custom_options);
  const Tensor& in = ctx.input(0);
  const Tensor& w = ctx.input(1);
  const float* bias = ctx.has_input(2) ? ctx.input(2).as<float>() : nullptr;
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
  auto before = [](int in, int k, int s, int out) {
    const int total = (in - 1) * s + k - out;
    return total > 0 ? total / 2 : 0;
  };
  g.pad_top = before(g.in_h, g.kh, g.stride_h, g.out_h);
  g.pad_left = before(g.in_w, g.kw, g.stride_w, g.out_w);
  (fp16::DotProductsInHalf(ctx) ? fp16::TransposeConv : conv::TransposeConv)(ctx.pool, in.as<float>(), w.as<float>(),
                                                                             bias, g, conv::Clamp{}, out.as<float>());
}

}  // namespace

Kernel Convolution2DTransposeBiasKernel() { return {CheckConvolution2dTransposeBias, EvalConvolution2dTransposeBias}; }

}  // namespace gpuclean::exec::kernels
