// DEPTH_TO_SPACE: NHWC, any fixed-size element type (it only moves elements).
//   DEPTH_TO_SPACE: out[b, y*s + dy, x*s + dx, c] = in[b, y, x, (dy*s + dx)*C_out + c]
//   SPACE_TO_DEPTH: out[b, y, x, (dy*s + dx)*C_in + c] = in[b, y*s + dy, x*s + dx, c]
// (TensorFlow's DCR order, which LiteRT uses.)
#include <cstring>

#include "exec/kernels/conv_util.h"

namespace gpuclean::exec::kernels {
namespace {

void Check(const ir::Subgraph& graph, const ir::Op& op) {
  const ir::DType d = graph.tensors[op.inputs.at(0)].dtype;
  if (ir::DTypeSize(d) == 0) ThrowUnsupportedDtype(graph, op, d);
  if (graph.tensors[op.outputs.at(0)].dtype != d) conv::ThrowBadInput(graph, op, "output dtype differs from input");
  if (conv::InputRank(graph, op, 0) != 4) conv::ThrowBadInput(graph, op, "input must have rank 4");
  const auto* o = op.options.AsDepthToSpaceOptions();
  if (!o || o->block_size < 1) conv::ThrowBadInput(graph, op, "block_size must be >= 1");
}

void Eval(KernelContext& ctx) {
  const int s = ctx.op.options.AsDepthToSpaceOptions()->block_size;
  const Tensor& in = ctx.input(0);
  Tensor& out = ctx.output(0);
  if (out.num_elements() == 0) return;
  const size_t elem = ir::DTypeSize(in.dtype);
  // Each input pixel's channels split into s*s runs of C_out elements.
  const int batch = in.dim(0), h = in.dim(1), w = in.dim(2);
  const size_t run = elem * static_cast<size_t>(out.dim(3));
  const int ow = out.dim(2);
  const uint8_t* src = in.data;
  uint8_t* dst = out.data;
  const int64_t rows = static_cast<int64_t>(batch) * h;
  ctx.pool.ParallelFor(rows, conv::GrainFor(rows, static_cast<int64_t>(w) * s * s * run / 4 + 1),
                       [&](int64_t r0, int64_t r1) {
                         for (int64_t r = r0; r < r1; ++r) {
                           const int64_t b = r / h;
                           const int y = static_cast<int>(r % h);
                           for (int x = 0; x < w; ++x) {
                             const uint8_t* p = src + (r * w + x) * s * s * run;
                             for (int dy = 0; dy < s; ++dy)
                               for (int dx = 0; dx < s; ++dx)
                                 std::memcpy(dst + ((b * out.dim(1) + y * s + dy) * ow + x * s + dx) * run,
                                             p + (dy * s + dx) * run, run);
                           }
                         }
                       });
}

}  // namespace

Kernel DepthToSpaceKernel() { return {Check, Eval}; }

}  // namespace gpuclean::exec::kernels
