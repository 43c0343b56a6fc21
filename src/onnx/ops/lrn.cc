// LRN and LpNormalization (MeanVarianceNormalization lives in
// normalization.cc).
//   LRN: y = x / (bias + alpha / size * window_sum(x^2))^beta over channels;
//        the window sum is a 1x1 CONV_2D by a constant band matrix on NHWC
//        (GPU-friendly), the power a POW.
//   LpNormalization (p 1 or 2): x / sum(|x|) or x / sqrt(sum(x^2)) along the
//        axis, in the input's layout.
#include <algorithm>

#include <fmt/format.h>

#include "onnx/ops/ops.h"

namespace gpuclean::onnx::ops {
namespace {

void Lrn(NodeContext& ctx) {
  if (ctx.Rank(0) != 4) ctx.Fail(fmt::format("rank-{} input; only rank 4 (NCHW) is converted", ctx.Rank(0)));
  const int64_t size = ctx.Int("size", 0);
  if (size < 1) ctx.BadModel("size must be >= 1");
  const float alpha = ctx.Float("alpha", 1e-4f), beta = ctx.Float("beta", 0.75f), bias = ctx.Float("bias", 1.0f);
  const int64_t c = ctx.Shape(0)[1];
  const int64_t before = (size - 1) / 2, after = size - 1 - before;
  // filter [O, 1, 1, I]: output channel o sums input channels o-before..o+after.
  std::vector<float> band(static_cast<size_t>(c * c), 0.0f);
  for (int64_t o = 0; o < c; ++o)
    for (int64_t i = std::max<int64_t>(0, o - before); i <= std::min(c - 1, o + after); ++i)
      band[o * c + i] = alpha / static_cast<float>(size);
  auto& b = ctx.b();
  const int x = ctx.TensorIn(0, kToNhwc);
  const int filter = ctx.ConstF32({c, 1, 1, c}, band);
  const int sum = b.Conv2D(b.Mul(x, x), filter, builder::kNoInput, tfl::Padding_VALID, 1, 1);
  const int denom = b.Pow(b.Add(sum, ctx.ScalarF32(bias)), ctx.ScalarF32(beta));
  ctx.Out(0, b.Div(x, denom), kToNhwc);
}

void LpNormalization(NodeContext& ctx) {
  const int rank = ctx.Rank(0);
  const int axis = NormalizeAxis(ctx.Int("axis", -1), rank, ctx.node().Label());
  const int64_t p = ctx.Int("p", 2);
  if (p != 1 && p != 2) ctx.BadModel("p must be 1 or 2");
  const Perm perm = ctx.PermOf(0);
  auto& b = ctx.b();
  const int x = ctx.TensorIn(0, perm);
  const std::vector<int32_t> axes = {StoredAxis(perm, axis)};
  const int norm = p == 1 ? b.Sum(b.Abs(x), axes, true) : b.Sqrt(b.Sum(b.Mul(x, x), axes, true));
  ctx.Out(0, b.Div(x, norm), perm);
}

}  // namespace

void RegisterLrn(Registry& r) {
  r.Add("LRN", Lrn);
  r.Add("LpNormalization", LpNormalization);
}

}  // namespace gpuclean::onnx::ops
