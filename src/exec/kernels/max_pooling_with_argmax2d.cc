// MaxPoolingWithArgmax2D (MediaPipe custom op): NHWC float32 input; outputs
// the window maxima and, as float32, where in the window each maximum sits.
// custom_options is a raw TfLitePoolParams {padding, stride_width,
// stride_height, filter_width, filter_height, activation}.
// Semantics of MediaPipe's kernel (max_pool_argmax.cc): windows clipped to
// the input, the first strict maximum in row-major window order wins, index
// = window_y * filter_width + window_x (MediaPipe stores it + 0.1 so that a
// float -> int cast recovers it), values clamped by the activation.
#include <limits>

#include "exec/kernels/conv_util.h"
#include "gpuclean/shapes.h"

namespace gpuclean::exec::kernels {
namespace {

void CheckMaxPoolingWithArgmax2d(const ir::Subgraph& graph, const ir::Op& op) {
  conv::RequireFloat32(graph, op);
  if (op.inputs.size() != 1 || op.outputs.size() != 2) conv::ThrowBadInput(graph, op, "needs 1 input and 2 outputs");
  if (conv::InputRank(graph, op, 0) != 4) conv::ThrowBadInput(graph, op, "input must have rank 4");
  const auto o = ir::DecodeMediaPipePoolOptions(op.custom_options);
  if (o.stride_w <= 0 || o.stride_h <= 0 || o.filter_w <= 0 || o.filter_h <= 0)
    conv::ThrowBadInput(graph, op, "strides and filter sizes must be positive");
}

GPUCLEAN_CONV_HOT void RowsMaxPoolingWithArgmax2d(const float* in, float* values, float* indices, int in_h, int in_w,
                                                  int c, int out_h, int out_w, const ir::MediaPipePoolOptions& o,
                                                  int pad_top, int pad_left, conv::Clamp clamp, int64_t r0,
                                                  int64_t r1) {
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t b = r / out_h;
    const int oy = static_cast<int>(r % out_h);
    const int iy0 = oy * o.stride_h - pad_top;
    const int fy0 = std::max(0, -iy0), fy1 = std::min(o.filter_h, in_h - iy0);
    for (int ox = 0; ox < out_w; ++ox) {
      const int ix0 = ox * o.stride_w - pad_left;
      const int fx0 = std::max(0, -ix0), fx1 = std::min(o.filter_w, in_w - ix0);
      float* v = values + (r * out_w + ox) * c;
      float* idx = indices + (r * out_w + ox) * c;
      for (int i = 0; i < c; ++i) {
        float best = std::numeric_limits<float>::lowest();
        int best_y = 0, best_x = 0;
        for (int fy = fy0; fy < fy1; ++fy)
          for (int fx = fx0; fx < fx1; ++fx) {
            const float x = in[((b * in_h + iy0 + fy) * in_w + ix0 + fx) * c + i];
            if (x > best) {
              best = x;
              best_y = fy;
              best_x = fx;
            }
          }
        v[i] = clamp(best);
        idx[i] = static_cast<float>(best_y * o.filter_w + best_x) + 0.1f;
      }
    }
  }
}

void EvalMaxPoolingWithArgmax2d(KernelContext& ctx) {
  const auto o = ir::DecodeMediaPipePoolOptions(ctx.op.custom_options);
  const Tensor& in = ctx.input(0);
  Tensor& values = ctx.output(0);
  Tensor& indices = ctx.output(1);
  if (values.num_elements() == 0) return;
  const int in_h = in.dim(1), in_w = in.dim(2), c = in.dim(3), out_h = values.dim(1), out_w = values.dim(2);
  const int pad_top = conv::PaddingBefore(in_h, o.filter_h, o.stride_h, 1, out_h);
  const int pad_left = conv::PaddingBefore(in_w, o.filter_w, o.stride_w, 1, out_w);
  const conv::Clamp clamp = conv::ActivationClamp(o.activation);
  const int64_t rows = static_cast<int64_t>(in.dim(0)) * out_h;
  ctx.pool.ParallelFor(rows, conv::GrainFor(rows, static_cast<int64_t>(out_w) * c * o.filter_h * o.filter_w),
                       [&](int64_t r0, int64_t r1) {
                         RowsMaxPoolingWithArgmax2d(in.as<float>(), values.as<float>(), indices.as<float>(), in_h, in_w,
                                                    c, out_h, out_w, o, pad_top, pad_left, clamp, r0, r1);
                       });
}

}  // namespace

Kernel MaxPoolingWithArgmax2DKernel() { return {CheckMaxPoolingWithArgmax2d, EvalMaxPoolingWithArgmax2d}; }

}  // namespace gpuclean::exec::kernels
