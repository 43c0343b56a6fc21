// BATCH_MATMUL: x [..., M, K] (adj_x: [..., K, M]) times y [..., K, N]
// (adj_y: [..., N, K]); ranks 2..5, batch dimensions broadcast numpy-style
// (aligned on the right). float32.
//
// Every batch is one GEMM reading both operands through strides; when y has
// no batch of its own it is packed once and x's batches fold into one tall
// matrix.
#include <vector>

#include "exec/kernels/conv_util.h"
#include "exec/kernels/fp16_compute.h"

namespace gpuclean::exec::kernels {
namespace {

void CheckBatchMatmul(const ir::Subgraph& graph, const ir::Op& op) {
  conv::RequireFloat32(graph, op);
  for (int i = 0; i < 2; ++i) {
    const int r = conv::InputRank(graph, op, i);
    if (r < 2 || r > 5) conv::ThrowUnsupportedAttr(graph, op, "operands of rank outside 2..5");
  }
}

// Offset of the batch of `t` (shape `shape`, last two dims excluded) that
// output batch `index` (over `out_batch` dims) reads.
int64_t BatchOffset(const std::vector<int32_t>& shape, const std::vector<int32_t>& out_batch, int64_t index) {
  const int rb = static_cast<int>(shape.size()) - 2;
  const int ob = static_cast<int>(out_batch.size());
  const int64_t matrix = static_cast<int64_t>(shape[rb]) * shape[rb + 1];
  int64_t offset = 0, stride = matrix;
  for (int d = ob - 1; d >= 0; --d) {
    const int64_t coord = index % out_batch[d];
    index /= out_batch[d];
    const int sd = d - (ob - rb);
    if (sd < 0) continue;
    if (shape[sd] != 1) offset += coord * stride;
    stride *= shape[sd];
  }
  return offset;
}

void EvalBatchMatmul(KernelContext& ctx) {
  const auto* o = ctx.op.options.AsBatchMatMulOptions();
  const bool adj_x = o && o->adj_x, adj_y = o && o->adj_y;
  const Tensor& x = ctx.input(0);
  const Tensor& y = ctx.input(1);
  Tensor& out = ctx.output(0);
  const int m = adj_x ? x.dim(-1) : x.dim(-2);
  const int k = adj_x ? x.dim(-2) : x.dim(-1);
  const int n = adj_y ? y.dim(-2) : y.dim(-1);
  const std::vector<int32_t> out_batch(out.shape.begin(), out.shape.end() - 2);
  int64_t batches = 1;
  for (int32_t d : out_batch) batches *= d;
  if (batches == 0 || m == 0 || n == 0) return;
  // A(m, k) and B(n, k) strides inside one batch.
  const int64_t a_row = adj_x ? 1 : k, a_col = adj_x ? m : 1;
  const int64_t b_row = adj_y ? k : 1, b_col = adj_y ? 1 : n;
  const float* xp = x.as<float>();
  const float* yp = y.as<float>();
  float* op = out.as<float>();

  int64_t y_elems = 1;
  for (int d = 0; d + 2 < y.rank(); ++d) y_elems *= y.shape[d];
  int64_t x_batches = 1;
  for (int d = 0; d + 2 < x.rank(); ++d) x_batches *= x.shape[d];
  if (fp16::DotProductsInHalf(ctx)) {
    for (int64_t bi = 0; bi < batches; ++bi)
      fp16::Gemm(ctx.pool, m, n, k, {xp + BatchOffset(x.shape, out_batch, bi), a_row, a_col},
                 {yp + BatchOffset(y.shape, out_batch, bi), b_row, b_col}, nullptr, conv::Clamp{},
                 op + bi * static_cast<int64_t>(m) * n, n);
    return;
  }
  // Below ~1M multiply-adds oneDNN's call costs more than it saves (detr_small's
  // decoder: 6.6 vs 5.6 ms); above, it wins (vit_small6: 38.5 vs 53.5 ms).
  constexpr double kOneDnnMinMacs = 1 << 20;
  if (static_cast<double>(batches) * m * n * k >= kOneDnnMinMacs && conv::OneDnnBatchMatMul(ctx, adj_x, adj_y)) return;
  if (y_elems == 1 && !adj_x && x_batches == batches) {
    // One shared right-hand side: x's batches are consecutive rows.
    conv::Gemm(ctx.pool, batches * m, n, k, {xp, k, 1}, {yp, b_row, b_col}, nullptr, conv::Clamp{}, op, n);
    return;
  }
  conv::PackedB packed;
  int64_t packed_offset = -1;
  for (int64_t bi = 0; bi < batches; ++bi) {
    const int64_t xo = BatchOffset(x.shape, out_batch, bi);
    const int64_t yo = BatchOffset(y.shape, out_batch, bi);
    float* c = op + bi * static_cast<int64_t>(m) * n;
    if (m < 4 && !adj_x && adj_y) {
      conv::Gemm(ctx.pool, m, n, k, {xp + xo, a_row, a_col}, {yp + yo, b_row, b_col}, nullptr, conv::Clamp{}, c, n);
      continue;
    }
    if (yo != packed_offset) {
      conv::PackB(ctx.pool, {yp + yo, b_row, b_col}, n, k, nullptr, &packed);
      packed_offset = yo;
    }
    conv::Gemm(ctx.pool, m, {xp + xo, a_row, a_col}, packed, conv::Clamp{}, c, n);
  }
}

}  // namespace

Kernel BatchMatMulKernel() { return {CheckBatchMatmul, EvalBatchMatmul}; }

}  // namespace gpuclean::exec::kernels
