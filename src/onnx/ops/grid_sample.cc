// GridSample (opset 16; rank-4 NCHW input, run-time grid): modes bilinear
// and nearest, padding zeros and border, align_corners 0/1, as
// onnxruntime computes them:
//   ix = align ? (gx + 1) / 2 * (W - 1) : ((gx + 1) * W - 1) / 2   (iy alike)
//   bilinear: the four corners floor(ix)+{0,1} x floor(iy)+{0,1}, weighted
//   by the distances; nearest: nearbyint (half to even) of ix, iy.
//   zeros: a corner outside the input contributes 0; border: corners clamp.
//   reflection: coordinates (and then each corner) mirrored into the
//   sampling range, as onnxruntime's GsReflect.
// Bilinear with zeros padding is lowered without any gather, as the
// RF-DETR-Seg deployment re-authored it: a corner weight is the tent
// max(0, 1 - |ix - w|), so
//   out[n,c,p] = sum_h sum_w x[n,c,h,w] * tent(iy_p - h) * tent(ix_p - w)
// over the input's own pixels only (a corner outside contributes 0, as
// zeros padding asks): one BATCH_MATMUL over w, a MUL and a SUM over h.
// Exact in real arithmetic; C*H*W*P multiply-adds, so past kMaxTentMacs the
// gather form below is kept. Otherwise each corner is a GATHER_ND from the
// NHWC input with coordinates built at run time (batch index constant, y
// and x clamped and cast); the output is NHWC. Refused: bicubic.
#include <tuple>

#include <fmt/format.h>

#include "onnx/ops/exact.h"

namespace gpuclean::onnx::ops {
namespace {

constexpr int64_t kMaxTentMacs = int64_t{1} << 28;

void GridSample(NodeContext& ctx) {
  if (ctx.Rank(0) != 4 || ctx.Rank(1) != 4) ctx.Fail("only rank-4 inputs (2-D sampling) are converted");
  const std::string mode = ctx.Str("mode", "bilinear");
  const std::string padding = ctx.Str("padding_mode", "zeros");
  const bool align = ctx.Int("align_corners", 0) != 0;
  if (mode != "bilinear" && mode != "nearest" && mode != "linear")
    ctx.Fail(fmt::format("mode '{}' is not supported (bilinear and nearest are)", mode));
  if (padding != "zeros" && padding != "border" && padding != "reflection")
    ctx.Fail(fmt::format("padding_mode '{}' is not supported", padding));
  if (ctx.DType(0) != tfl::TensorType_FLOAT32 || ctx.DType(1) != tfl::TensorType_FLOAT32)
    ctx.Fail("only float inputs are supported");
  const Dims& xs = ctx.Shape(0);
  const Dims& gs = ctx.Shape(1);
  if (gs[0] != xs[0] || gs[3] != 2) ctx.BadModel("grid must be [N, H_out, W_out, 2]");
  const int32_t n = static_cast<int32_t>(xs[0]), h = static_cast<int32_t>(xs[2]), w = static_cast<int32_t>(xs[3]);
  const int32_t ho = static_cast<int32_t>(gs[1]), wo = static_cast<int32_t>(gs[2]);
  auto& b = ctx.b();
  const int x = ctx.TensorIn(0, kToNhwc);
  const int grid = ctx.Tensor(1);
  const int gx = b.Slice(grid, {0, 0, 0, 0}, {n, ho, wo, 1});
  const int gy = b.Slice(grid, {0, 0, 0, 1}, {n, ho, wo, 1});
  const int one = ctx.ScalarF32(1.0f), half = ctx.ScalarF32(0.5f);
  auto denormalize = [&](int g, int32_t len) {
    if (align) return b.Mul(b.Mul(b.Add(g, one), half), ctx.ScalarF32(static_cast<float>(len - 1)));
    return b.Mul(b.Sub(b.Mul(b.Add(g, one), ctx.ScalarF32(static_cast<float>(len))), one), half);
  };
  int ix = denormalize(gx, w), iy = denormalize(gy, h);
  const int64_t c = xs[1], p = static_cast<int64_t>(ho) * wo;
  if ((mode == "bilinear" || mode == "linear") && padding == "zeros" && c * h * w * p <= kMaxTentMacs) {
    // tent(i - k) for k = 0..len-1: [n, P, len].
    auto tents = [&](int coordinate, int32_t len) {
      std::vector<float> ks(len);
      for (int32_t k = 0; k < len; ++k) ks[k] = static_cast<float>(k);
      const int positions = b.Reshape(coordinate, {n, static_cast<int32_t>(p), 1});
      return b.Relu(b.Sub(one, b.Abs(b.Sub(positions, ctx.ConstF32({1, 1, len}, ks)))));
    };
    const int tx = tents(ix, w), ty = tents(iy, h);
    const int rows = b.Reshape(ctx.TensorIn(0, {}), {n, static_cast<int32_t>(c) * h, w});
    const int along_w = b.BatchMatMul(rows, b.Transpose(tx, {0, 2, 1}));  // [n, C*H, P]
    const int weighted = b.Mul(b.Reshape(along_w, {n, static_cast<int32_t>(c), h, static_cast<int32_t>(p)}),
                               b.Reshape(b.Transpose(ty, {0, 2, 1}), {n, 1, h, static_cast<int32_t>(p)}));
    ctx.Out(0, b.Reshape(b.Sum(weighted, {2}, false), {n, static_cast<int32_t>(c), ho, wo}));
    return;
  }
  const bool reflect = padding == "reflection";
  // onnxruntime's GsReflect: fold v into [lo, hi] by mirroring at the ends.
  const float x_lo = align ? 0.0f : -0.5f, x_hi = align ? static_cast<float>(w - 1) : static_cast<float>(w) - 0.5f;
  const float y_lo = align ? 0.0f : -0.5f, y_hi = align ? static_cast<float>(h - 1) : static_cast<float>(h) - 0.5f;
  auto reflect_into = [&](int v, float lo_f, float hi_f) {
    const int lo = ctx.ScalarF32(lo_f), hi = ctx.ScalarF32(hi_f), range = ctx.ScalarF32(hi_f - lo_f);
    const int below = b.Less(v, lo), above = b.Greater(v, hi);
    const int zero_f = ctx.ScalarF32(0.0f);
    const int dx = b.SelectV2(below, b.Sub(lo, v), b.SelectV2(above, b.Sub(v, hi), zero_f));
    const int n = hi_f > lo_f ? b.Floor(b.Div(dx, range)) : zero_f;
    const int r = b.Sub(dx, b.Mul(n, range));
    const int even = b.Equal(b.Sub(n, b.Mul(b.Floor(b.Mul(n, half)), ctx.ScalarF32(2.0f))), zero_f);
    const int lo_r = b.Add(lo, r), hi_r = b.Sub(hi, r);
    const int from_below = b.SelectV2(even, lo_r, hi_r), from_above = b.SelectV2(even, hi_r, lo_r);
    return b.SelectV2(below, from_below, b.SelectV2(above, from_above, v));
  };
  if (reflect && mode != "nearest") {
    ix = reflect_into(ix, x_lo, x_hi);
    iy = reflect_into(iy, y_lo, y_hi);
  }
  std::vector<int32_t> batch(static_cast<size_t>(n) * ho * wo);
  for (size_t i = 0; i < batch.size(); ++i) batch[i] = static_cast<int32_t>(i / (static_cast<size_t>(ho) * wo));
  const int batch_index = ctx.ConstI32({n, ho, wo, 1}, batch);
  const int zero = ctx.ScalarF32(0.0f);
  const int max_x = ctx.ScalarF32(static_cast<float>(w - 1)), max_y = ctx.ScalarF32(static_cast<float>(h - 1));
  // The input at integer-valued float coordinates (cx, cy), [N, Ho, Wo, C],
  // and (zeros padding) whether they fall inside, as float [N, Ho, Wo, 1].
  auto sample = [&](int cx, int cy, int* inside) {
    if (reflect) {
      // Integer corners reflect again, then truncate (as static_cast does).
      const auto trunc = [&](int v) {
        return b.SelectV2(b.GreaterEqual(v, ctx.ScalarF32(0.0f)), b.Floor(v), b.Ceil(v));
      };
      cx = trunc(reflect_into(cx, x_lo, x_hi));
      cy = trunc(reflect_into(cy, y_lo, y_hi));
    }
    const int cxc = b.Minimum(b.Maximum(cx, zero), max_x);
    const int cyc = b.Minimum(b.Maximum(cy, zero), max_y);
    const int coords =
        b.Concatenation({batch_index, b.Cast(cyc, tfl::TensorType_INT32), b.Cast(cxc, tfl::TensorType_INT32)}, 3);
    *inside = -1;
    if (padding == "zeros") {
      const int ok = b.LogicalAnd(b.LogicalAnd(b.GreaterEqual(cx, zero), b.LessEqual(cx, max_x)),
                                  b.LogicalAnd(b.GreaterEqual(cy, zero), b.LessEqual(cy, max_y)));
      *inside = b.Cast(ok, tfl::TensorType_FLOAT32);
    }
    return b.GatherNd(x, coords);
  };
  int y;
  if (mode == "nearest") {
    int inside;
    y = sample(RoundHalfEven(ctx, ix), RoundHalfEven(ctx, iy), &inside);
    if (inside >= 0) y = b.Mul(y, inside);
  } else {
    const int x0 = b.Floor(ix), y0 = b.Floor(iy);
    const int x1 = b.Add(x0, one), y1 = b.Add(y0, one);
    const int wx1 = b.Sub(ix, x0), wy1 = b.Sub(iy, y0);
    const int wx0 = b.Sub(x1, ix), wy0 = b.Sub(y1, iy);
    y = -1;
    for (const auto& [cx, cy, wgt] : {std::tuple{x0, y0, b.Mul(wx0, wy0)}, std::tuple{x1, y0, b.Mul(wx1, wy0)},
                                      std::tuple{x0, y1, b.Mul(wx0, wy1)}, std::tuple{x1, y1, b.Mul(wx1, wy1)}}) {
      int inside;
      const int v = sample(cx, cy, &inside);
      const int weight = inside >= 0 ? b.Mul(wgt, inside) : wgt;
      const int term = b.Mul(v, weight);
      y = y < 0 ? term : b.Add(y, term);
    }
  }
  ctx.Out(0, y, kToNhwc);
}

}  // namespace

void RegisterGridSample(Registry& r) { r.Add("GridSample", GridSample); }

}  // namespace gpuclean::onnx::ops
