// MIRROR_PAD: REFLECT mirrors without the edge element, SYMMETRIC with it.
// Each output coordinate maps to one input coordinate per dimension (with
// LiteRT's clamping when a padding exceeds what one reflection covers), so
// eval precomputes one offset table per dimension and gathers.
#include "exec/kernels/layout_util.h"

namespace gpuclean::exec::kernels {
namespace {

void CheckMirrorPad(const ir::Subgraph& graph, const ir::Op& op) {
  RequireInputCount(graph, op, 2, 2);
  RequireMovable(graph, op, {0});
  RequireIndexInput(graph, op, 1, "paddings");
  const auto mode = OptionsOr<tfl::MirrorPadOptionsT>(op).mode;
  if (mode != tfl::MirrorPadMode_REFLECT && mode != tfl::MirrorPadMode_SYMMETRIC)
    ThrowOpUnsupported(graph, op, "unknown mirror pad mode {}", static_cast<int>(mode));
}

// Input index for output index `p` of one dimension.
int64_t SourceIndex(int64_t p, int64_t left, int64_t n, int64_t offset) {
  if (p < left) {
    const int64_t origin = left + offset - 1;
    return origin - std::min(p, origin - offset);
  }
  p -= left;
  if (p >= n) {
    p -= n;
    const int64_t origin = n - (1 + offset);
    return origin - std::min(p, origin);
  }
  return p;
}

template <typename T>
void Gather(ThreadPool& pool, const std::vector<std::vector<int64_t>>& tables, std::span<const int32_t> out_shape,
            const uint8_t* src, uint8_t* dst) {
  const size_t rank = out_shape.size();
  const int64_t inner = out_shape[rank - 1];
  const std::vector<int64_t>& last = tables[rank - 1];
  const int64_t rows = ProductOf(out_shape, 0, rank - 1);
  const T* in = reinterpret_cast<const T*>(src);
  T* out = reinterpret_cast<T*>(dst);
  pool.ParallelFor(rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(inner, 1)), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      int64_t base = 0, rest = r;
      for (size_t d = rank - 1; d-- > 0;) {
        base += tables[d][rest % out_shape[d]];
        rest /= out_shape[d];
      }
      T* y = out + r * inner;
      const T* x = in + base;
      for (int64_t i = 0; i < inner; ++i) y[i] = x[last[i]];
    }
  });
}

void EvalMirrorPad(KernelContext& ctx) {
  const Tensor& input = ctx.input(0);
  Tensor& output = ctx.output(0);
  const int rank = input.rank();
  const auto pads = ReadPaddings(ctx);
  const int64_t offset = OptionsOr<tfl::MirrorPadOptionsT>(ctx.op).mode == tfl::MirrorPadMode_REFLECT ? 1 : 0;
  if (output.num_elements() == 0) return;
  if (rank == 0) {
    std::memcpy(output.data, input.data, ElementSize(input));
    return;
  }
  const std::vector<int64_t> in_strides = StridesOf(input.shape);
  std::vector<std::vector<int64_t>> tables(rank);
  for (int d = 0; d < rank; ++d) {
    const int64_t n = input.shape[d];
    if (output.shape[d] != n + pads[d].first + pads[d].second)
      ThrowOpBadInput(ctx, "output dim {} is {}, expected {}", d, output.shape[d], n + pads[d].first + pads[d].second);
    tables[d].resize(output.shape[d]);
    for (int64_t p = 0; p < output.shape[d]; ++p) {
      // Paddings beyond one reflection clamp (LiteRT does not reject them);
      // only a source outside the input is an error.
      const int64_t s = SourceIndex(p, pads[d].first, n, offset);
      if (s < 0 || s >= n)
        ThrowOpBadInput(ctx, "paddings ({}, {}) of dimension {} do not fit an input of size {} in {} mode",
                        pads[d].first, pads[d].second, d, n, offset ? "REFLECT" : "SYMMETRIC");
      tables[d][p] = s * in_strides[d];
    }
  }
  switch (ElementSize(input)) {
    case 1: Gather<uint8_t>(ctx.pool, tables, output.shape, input.data, output.data); break;
    case 2: Gather<uint16_t>(ctx.pool, tables, output.shape, input.data, output.data); break;
    case 4: Gather<uint32_t>(ctx.pool, tables, output.shape, input.data, output.data); break;
    case 8: Gather<uint64_t>(ctx.pool, tables, output.shape, input.data, output.data); break;
    default: ThrowOpBadInput(ctx, "element size {} is not supported", ElementSize(input));
  }
}

}  // namespace

Kernel MirrorPadKernel() { return {CheckMirrorPad, EvalMirrorPad}; }

}  // namespace gpuclean::exec::kernels
