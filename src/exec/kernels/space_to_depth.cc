// SPACE_TO_DEPTH: NHWC, any fixed-size element type (it only moves elements).
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
  const auto* o = op.options.AsSpaceToDepthOptions();
  if (!o || o->block_size < 1) conv::ThrowBadInput(graph, op, "block_size must be >= 1");
}

void Eval(KernelContext& ctx) {
  const int s = ctx.op.options.AsSpaceToDepthOptions()->block_size;
  const Tensor& in = ctx.input(0);
  Tensor& out = ctx.output(0);
  if (out.num_elements() == 0) return;
  const size_t elem = ir::DTypeSize(in.dtype);
  // Each output pixel's channels gather s*s runs of C_in elements.
  const int batch = out.dim(0), oh = out.dim(1), ow = out.dim(2);
  const size_t run = elem * static_cast<size_t>(in.dim(3));
  const int ih = in.dim(1), iw = in.dim(2);
  const uint8_t* src = in.data;
  uint8_t* dst = out.data;
  const int64_t rows = static_cast<int64_t>(batch) * oh;
  ctx.pool.ParallelFor(
      rows, conv::GrainFor(rows, static_cast<int64_t>(ow) * s * s * run / 4 + 1), [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
          const int64_t b = r / oh;
          const int y = static_cast<int>(r % oh);
          for (int x = 0; x < ow; ++x) {
            uint8_t* p = dst + (r * ow + x) * s * s * run;
            for (int dy = 0; dy < s; ++dy)
              for (int dx = 0; dx < s; ++dx)
                std::memcpy(p + (dy * s + dx) * run, src + ((b * ih + y * s + dy) * iw + x * s + dx) * run, run);
          }
        }
      });
}

}  // namespace

Kernel SpaceToDepthKernel() { return {Check, Eval}; }

}  // namespace gpuclean::exec::kernels
