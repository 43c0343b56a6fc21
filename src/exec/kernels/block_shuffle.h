#pragma once
// The core DEPTH_TO_SPACE and SPACE_TO_DEPTH share (NHWC, any fixed-size
// element type: they only move elements), in TensorFlow's DCR order, which
// LiteRT uses:
//   DEPTH_TO_SPACE: out[b, y*s + dy, x*s + dx, c] = in[b, y, x, (dy*s + dx)*C_out + c]
//   SPACE_TO_DEPTH: out[b, y, x, (dy*s + dx)*C_in + c] = in[b, y*s + dy, x*s + dx, c]
// Both walk the depth-side map [B, H, W, s*s*C] and copy each pixel's s*s
// runs of C elements to or from the space-side map [B, H*s, W*s, C].
#include <cstring>

#include "exec/kernels/conv_util.h"

namespace gpuclean::exec::kernels::block_shuffle {

template <typename Options>
const Options* OptionsOf(const ir::Op& op) {
  return static_cast<const Options*>(
      op.options.type == tfl::BuiltinOptionsUnionTraits<Options>::enum_value ? op.options.value : nullptr);
}

template <typename Options>
void Check(const ir::Subgraph& graph, const ir::Op& op) {
  const ir::DType d = graph.tensors[op.inputs.at(0)].dtype;
  if (ir::DTypeSize(d) == 0) ThrowUnsupportedDtype(graph, op, d);
  if (graph.tensors[op.outputs.at(0)].dtype != d) conv::ThrowBadInput(graph, op, "output dtype differs from input");
  if (conv::InputRank(graph, op, 0) != 4) conv::ThrowBadInput(graph, op, "input must have rank 4");
  const Options* o = OptionsOf<Options>(op);
  if (!o || o->block_size < 1) conv::ThrowBadInput(graph, op, "block_size must be >= 1");
}

// to_space: DEPTH_TO_SPACE (input is the depth side), else SPACE_TO_DEPTH.
template <typename Options>
void Eval(KernelContext& ctx, bool to_space) {
  const int s = OptionsOf<Options>(ctx.op)->block_size;
  const Tensor& in = ctx.input(0);
  Tensor& out = ctx.output(0);
  if (out.num_elements() == 0) return;
  const Tensor& depth = to_space ? in : out;
  const Tensor& space = to_space ? out : in;
  const int batch = depth.dim(0), h = depth.dim(1), w = depth.dim(2);
  const size_t run = ir::DTypeSize(in.dtype) * static_cast<size_t>(space.dim(3));
  const int space_h = space.dim(1), space_w = space.dim(2);
  const uint8_t* src = in.data;
  uint8_t* dst = out.data;
  const int64_t rows = static_cast<int64_t>(batch) * h;
  ctx.pool.ParallelFor(
      rows, conv::GrainFor(rows, static_cast<int64_t>(w) * s * s * run / 4 + 1), [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
          const int64_t b = r / h;
          const int y = static_cast<int>(r % h);
          for (int x = 0; x < w; ++x) {
            const size_t depth_at = static_cast<size_t>((r * w + x) * s * s) * run;
            for (int dy = 0; dy < s; ++dy)
              for (int dx = 0; dx < s; ++dx) {
                const size_t space_at = static_cast<size_t>((b * space_h + y * s + dy) * space_w + x * s + dx) * run;
                const size_t block_at = depth_at + static_cast<size_t>(dy * s + dx) * run;
                if (to_space)
                  std::memcpy(dst + space_at, src + block_at, run);
                else
                  std::memcpy(dst + block_at, src + space_at, run);
              }
          }
        }
      });
}

}  // namespace gpuclean::exec::kernels::block_shuffle
