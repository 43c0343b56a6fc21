// MaxUnpooling2D (MediaPipe custom op): inputs values and argmax indices
// (float32, as MaxPoolingWithArgmax2D writes them), both NHWC of the pooled
// size; output [N, H*filter_h, W*filter_w, C]. custom_options is a raw
// TfLitePoolParams. MediaPipe's kernel (max_unpooling.cc): the output is
// zero except that each input element is written at
//   (y*stride_h - pad_top + idx / filter_w, x*stride_w - pad_left + idx % filter_w)
// with idx = int(index) and the padding of a pooling from the output size
// back to the input size; positions outside the output are skipped, later
// writes win.
#include <cstring>

#include "exec/kernels/conv_util.h"
#include "gpuclean/shapes.h"

namespace gpuclean::exec::kernels {
namespace {

void CheckMaxUnpooling2d(const ir::Subgraph& graph, const ir::Op& op) {
  conv::RequireFloat32(graph, op);
  if (op.inputs.size() != 2 || op.outputs.size() != 1) conv::ThrowBadInput(graph, op, "needs 2 inputs and 1 output");
  if (conv::InputRank(graph, op, 0) != 4 || conv::InputRank(graph, op, 1) != 4)
    conv::ThrowBadInput(graph, op, "inputs must have rank 4");
  const auto o = ir::DecodeMediaPipePoolOptions(op.custom_options);
  if (o.stride_w <= 0 || o.stride_h <= 0 || o.filter_w <= 0 || o.filter_h <= 0)
    conv::ThrowBadInput(graph, op, "strides and filter sizes must be positive");
}

void EvalMaxUnpooling2d(KernelContext& ctx) {
  const auto o = ir::DecodeMediaPipePoolOptions(ctx.op.custom_options);
  const Tensor& in = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  Tensor& out = ctx.output(0);
  std::memset(out.data, 0, out.bytes);
  if (in.num_elements() == 0) return;
  const int batch = in.dim(0), in_h = in.dim(1), in_w = in.dim(2), c = in.dim(3);
  const int out_h = out.dim(1), out_w = out.dim(2);
  const int pad_top = conv::PaddingBefore(out_h, o.filter_h, o.stride_h, 1, in_h);
  const int pad_left = conv::PaddingBefore(out_w, o.filter_w, o.stride_w, 1, in_w);
  const float* v = in.as<float>();
  const float* idx = indices.as<float>();
  float* dst = out.as<float>();
  // Sequential: overlapping windows make the write order observable.
  for (int b = 0; b < batch; ++b)
    for (int y = 0; y < in_h; ++y)
      for (int x = 0; x < in_w; ++x)
        for (int i = 0; i < c; ++i) {
          const int64_t at = ((static_cast<int64_t>(b) * in_h + y) * in_w + x) * c + i;
          // MediaPipe truncates to int; an index no int holds (NaN, 1e30,
          // from a hostile input) lands nowhere rather than through UB.
          const float index = idx[at];
          if (!(index > -2147483648.0f && index < 2147483648.0f)) continue;
          const int64_t k = static_cast<int64_t>(index);
          const int64_t oy = int64_t{y} * o.stride_h - pad_top + k / o.filter_w;
          const int64_t ox = int64_t{x} * o.stride_w - pad_left + k % o.filter_w;
          if (oy >= 0 && oy < out_h && ox >= 0 && ox < out_w)
            dst[((static_cast<int64_t>(b) * out_h + oy) * out_w + ox) * c + i] = v[at];
        }
}

}  // namespace

Kernel MaxUnpooling2DKernel() { return {CheckMaxUnpooling2d, EvalMaxUnpooling2d}; }

}  // namespace gpuclean::exec::kernels
