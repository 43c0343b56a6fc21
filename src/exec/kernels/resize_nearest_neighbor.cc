// RESIZE_NEAREST_NEIGHBOR: NHWC to the output's height and width, any
// fixed-size element type (it only copies). LiteRT's rule (reference
// GetNearestNeighbor):
//   scale = align_corners && out > 1 ? (in-1)/(out-1) : in/out   (float)
//   offset = half_pixel_centers ? 0.5 : 0
//   src = min(align_corners ? round((dst + offset)*scale)    (half away from 0)
//                           : floor((dst + offset)*scale), in - 1)
//   half_pixel_centers: src = max(src, 0).
#include <cmath>
#include <cstring>
#include <vector>

#include "exec/kernels/conv_util.h"

namespace gpuclean::exec::kernels {
namespace {

std::vector<int32_t> Nearest(int in, int out, bool align_corners, bool half_pixel_centers) {
  const float scale = (align_corners && out > 1) ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                                                 : static_cast<float>(in) / static_cast<float>(out);
  const float offset = half_pixel_centers ? 0.5f : 0.0f;
  std::vector<int32_t> src(out);
  for (int i = 0; i < out; ++i) {
    const float v = (static_cast<float>(i) + offset) * scale;
    int32_t s = static_cast<int32_t>(align_corners ? std::round(v) : std::floor(v));
    s = std::min(s, in - 1);
    if (half_pixel_centers) s = std::max(s, 0);
    src[i] = s;
  }
  return src;
}

void CheckResizeNearestNeighbor(const ir::Subgraph& graph, const ir::Op& op) {
  const ir::DType d = graph.tensors[op.inputs.at(0)].dtype;
  if (ir::DTypeSize(d) == 0 || d == tfl::TensorType_BOOL) ThrowUnsupportedDtype(graph, op, d);
  if (graph.tensors[op.outputs.at(0)].dtype != d) conv::ThrowBadInput(graph, op, "output dtype differs from input");
  if (conv::InputRank(graph, op, 0) != 4) conv::ThrowBadInput(graph, op, "input must have rank 4");
}

void EvalResizeNearestNeighbor(KernelContext& ctx) {
  const auto* o = ctx.op.options.AsResizeNearestNeighborOptions();
  const bool align = o && o->align_corners, half = o && o->half_pixel_centers;
  const Tensor& in = ctx.input(0);
  Tensor& out = ctx.output(0);
  if (out.num_elements() == 0) return;
  const int in_h = in.dim(1), in_w = in.dim(2), out_h = out.dim(1), out_w = out.dim(2);
  const std::vector<int32_t> sy = Nearest(in_h, out_h, align, half);
  const std::vector<int32_t> sx = Nearest(in_w, out_w, align, half);
  const size_t pixel = ir::DTypeSize(in.dtype) * static_cast<size_t>(in.dim(3));
  const uint8_t* src = in.data;
  uint8_t* dst = out.data;
  const int64_t rows = static_cast<int64_t>(in.dim(0)) * out_h;
  ctx.pool.ParallelFor(rows, conv::GrainFor(rows, static_cast<int64_t>(out_w) * pixel / 4 + 1),
                       [&](int64_t r0, int64_t r1) {
                         for (int64_t r = r0; r < r1; ++r) {
                           const int64_t b = r / out_h;
                           const uint8_t* row = src + (b * in_h + sy[r % out_h]) * in_w * pixel;
                           uint8_t* o = dst + r * out_w * pixel;
                           for (int x = 0; x < out_w; ++x) std::memcpy(o + x * pixel, row + sx[x] * pixel, pixel);
                         }
                       });
}

}  // namespace

Kernel ResizeNearestNeighborKernel() { return {CheckResizeNearestNeighbor, EvalResizeNearestNeighbor}; }

}  // namespace gpuclean::exec::kernels
