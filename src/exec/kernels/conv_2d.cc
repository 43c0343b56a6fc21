// CONV_2D: NHWC input [N, H, W, C], OHWI filter [O, KH, KW, C / groups],
// optional bias [O]; SAME/VALID padding, strides, dilations, fused activation
// (a clamp, as LiteRT applies it). Grouped convolution when C is a multiple
// of the filter's input depth, as LiteRT's kernels allow: group g reads input
// channels [g*Cg, (g+1)*Cg) and writes output channels [g*Og, (g+1)*Og).
//
// Each group is one GEMM: 1x1 stride-1 convolutions multiply the input in
// place; the rest go through an implicit im2col (conv_util.h).
#include <fmt/format.h>

#include "exec/kernels/conv_util.h"
#include "exec/kernels/fp16_compute.h"

namespace gpuclean::exec::kernels {
namespace {

void CheckConv2d(const ir::Subgraph& graph, const ir::Op& op) {
  conv::RequireFloat32(graph, op);
  const auto* o = op.options.AsConv2DOptions();
  if (!o) conv::ThrowBadInput(graph, op, "missing Conv2DOptions");
  if (conv::InputRank(graph, op, 0) != 4 || conv::InputRank(graph, op, 1) != 4)
    conv::ThrowUnsupportedAttr(graph, op, "input or filter of rank other than 4");
  if (conv::InputRank(graph, op, 2) > 1) conv::ThrowBadInput(graph, op, "bias must have rank 1");
  if (o->stride_w <= 0 || o->stride_h <= 0 || o->dilation_w_factor <= 0 || o->dilation_h_factor <= 0)
    conv::ThrowBadInput(graph, op, "strides and dilations must be positive");
  const auto& in = graph.tensors[op.inputs[0]].shape;
  const auto& w = graph.tensors[op.inputs[1]].shape;
  if (w[3] <= 0 || in[3] % w[3] != 0 || w[0] % (in[3] / w[3]) != 0)
    conv::ThrowBadInput(graph, op,
                        fmt::format("input depth {} is not a multiple of filter depth {} with output depth {} "
                                    "divisible by the groups",
                                    in[3], w[3], w[0]));
}

void EvalConv2d(KernelContext& ctx) {
  const auto& o = *ctx.op.options.AsConv2DOptions();
  const Tensor& in = ctx.input(0);
  const Tensor& w = ctx.input(1);
  const float* bias = ctx.has_input(2) ? ctx.input(2).as<float>() : nullptr;
  Tensor& out = ctx.output(0);
  if (out.num_elements() == 0) return;

  conv::ConvGeometry g;
  g.batch = in.dim(0);
  g.in_h = in.dim(1);
  g.in_w = in.dim(2);
  const int c = in.dim(3);
  g.in_pixel_stride = c;
  const int o_total = w.dim(0);
  g.kh = w.dim(1);
  g.kw = w.dim(2);
  g.in_c = w.dim(3);
  g.out_h = out.dim(1);
  g.out_w = out.dim(2);
  g.stride_h = o.stride_h;
  g.stride_w = o.stride_w;
  g.dil_h = o.dilation_h_factor;
  g.dil_w = o.dilation_w_factor;
  // A skipped PAD's zeros are taps outside the input, as the conv's own padding.
  const auto& pad = ctx.input_pad;
  g.pad_top = pad[0] + conv::PaddingBefore(g.in_h + pad[0] + pad[1], g.kh, g.stride_h, g.dil_h, g.out_h);
  g.pad_left = pad[2] + conv::PaddingBefore(g.in_w + pad[2] + pad[3], g.kw, g.stride_w, g.dil_w, g.out_w);
  const conv::Clamp clamp = conv::ActivationClamp(o.fused_activation_function);

  const int groups = g.in_c > 0 ? c / g.in_c : 1;
  const int og = o_total / groups;
  const int k = g.kh * g.kw * g.in_c;
  const bool pointwise = g.kh == 1 && g.kw == 1 && g.stride_h == 1 && g.stride_w == 1 && g.pad_top == 0 &&
                         g.pad_left == 0 && g.out_h == g.in_h && g.out_w == g.in_w;
  if (!fp16::DotProductsInHalf(ctx) &&
      (conv::OneDnnCodesConv2D(ctx, g, groups, o_total, w.as<float>(), bias, clamp, out.as<float>()) ||
       conv::OneDnnConv2D(ctx, g, groups, o_total, w.as<float>(), bias, clamp, out.as<float>())))
    return;
  for (int grp = 0; grp < groups; ++grp) {
    const float* wg = w.as<float>() + static_cast<int64_t>(grp) * og * k;
    const float* bg = bias ? bias + static_cast<int64_t>(grp) * og : nullptr;
    float* dst = out.as<float>() + static_cast<int64_t>(grp) * og;
    if (fp16::DotProductsInHalf(ctx)) {
      g.in_c_offset = grp * g.in_c;
      fp16::Conv(ctx.pool, in.as<float>(), g, wg, og, bg, clamp, dst, o_total);
    } else {
      conv::PackedB scratch;
      const conv::PackedB& packed = conv::PackedWeights(ctx, 1, 2, grp, {wg, k, 1}, og, k, bg, &scratch);
      if (pointwise) {
        const int64_t m = static_cast<int64_t>(g.batch) * g.in_h * g.in_w;
        conv::Gemm(ctx.pool, m, {in.as<float>() + static_cast<int64_t>(grp) * g.in_c, c, 1}, packed, clamp, dst,
                   o_total);
      } else {
        g.in_c_offset = grp * g.in_c;
        conv::ConvGemm(ctx.pool, in.as<float>(), g, packed, clamp, dst, o_total);
      }
    }
  }
}

}  // namespace

Kernel Conv2DKernel() { return {CheckConv2d, EvalConv2d}; }

}  // namespace gpuclean::exec::kernels
