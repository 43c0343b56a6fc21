// BatchNormalization (inference), LayerNormalization, InstanceNormalization.
// Per-channel parameters become constants laid out like the input, so the
// ops run in the input's layout (NHWC after a convolution).
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "onnx/ops/ops.h"

namespace gpuclean::onnx::ops {
namespace {

// A constant holding `values` along ONNX axis `axis` of a rank-`rank` tensor
// stored with `perm`, size 1 elsewhere.
int PerAxisConst(NodeContext& ctx, const std::vector<float>& values, int axis, int rank, const Perm& perm,
                 const std::string& role) {
  Shape32 shape(rank, 1);
  shape[StoredAxis(perm, axis)] = static_cast<int32_t>(values.size());
  return ctx.b().ConstF32(ctx.node().outputs[0] + "/" + role, shape, values);
}

// training_mode: normalised with the batch's own statistics (population
// variance); the running statistics outputs are input * momentum +
// batch * (1 - momentum).
void BatchNormTraining(NodeContext& ctx) {
  const int rank = ctx.Rank(0);
  if (rank < 2) ctx.BadModel("input rank < 2");
  const int64_t c = ctx.Shape(0)[1];
  const auto scale = ctx.ConstFloats(1), bias = ctx.ConstFloats(2);
  if (static_cast<int64_t>(scale.size()) != c || bias.size() != scale.size())
    ctx.BadModel("parameter sizes do not match the channels");
  const float eps = ctx.Float("epsilon", 1e-5f), momentum = ctx.Float("momentum", 0.9f);
  const Perm perm = ctx.PermOf(0);
  auto& b = ctx.b();
  const int x = ctx.TensorIn(0, perm);
  std::vector<int32_t> axes;
  for (int a = 0; a < rank; ++a)
    if (a != 1) axes.push_back(StoredAxis(perm, a));
  std::sort(axes.begin(), axes.end());
  const int mean = b.Mean(x, axes, true);
  const int centered = b.Sub(x, mean);
  const int var = b.Mean(b.Mul(centered, centered), axes, true);
  const int norm = b.Div(centered, b.Sqrt(b.Add(var, ctx.ScalarF32(eps))));
  ctx.Out(0,
          b.Add(b.Mul(norm, PerAxisConst(ctx, scale, 1, rank, perm, "scale")),
                PerAxisConst(ctx, bias, 1, rank, perm, "bias")),
          perm);
  const Shape32 vec = {static_cast<int32_t>(c)};
  for (int k = 1; k <= 2; ++k) {
    if (!ctx.HasOutput(k)) continue;
    const int batch = b.Reshape(k == 1 ? mean : var, vec);
    const int running = b.Mul(ctx.TensorIn(2 + k, {}), ctx.ScalarF32(momentum));
    ctx.Out(k, b.Add(running, b.Mul(batch, ctx.ScalarF32(1.0f - momentum))));
  }
}

void BatchNorm(NodeContext& ctx) {
  if (ctx.Int("training_mode", 0) != 0) return BatchNormTraining(ctx);
  if (ctx.HasOutput(1) || ctx.HasOutput(2)) ctx.Fail("running statistics outputs without training_mode");
  const int rank = ctx.Rank(0);
  if (rank < 2) ctx.BadModel("input rank < 2");
  const int64_t c = ctx.Shape(0)[1];
  const auto scale = ctx.ConstFloats(1), bias = ctx.ConstFloats(2), mean = ctx.ConstFloats(3), var = ctx.ConstFloats(4);
  if (static_cast<int64_t>(scale.size()) != c || bias.size() != scale.size() || mean.size() != scale.size() ||
      var.size() != scale.size())
    ctx.BadModel("parameter sizes do not match the channels");
  const float eps = ctx.Float("epsilon", 1e-5f);
  std::vector<float> mul(c), add(c);
  for (int64_t i = 0; i < c; ++i) {
    // Folded in double so the one rounding is the float result's.
    const double m = static_cast<double>(scale[i]) / std::sqrt(static_cast<double>(var[i]) + eps);
    mul[i] = static_cast<float>(m);
    add[i] = static_cast<float>(static_cast<double>(bias[i]) - static_cast<double>(mean[i]) * m);
  }
  const Perm perm = ctx.PermOf(0);
  auto& b = ctx.b();
  const int x = ctx.TensorIn(0, perm);
  const int y =
      b.Add(b.Mul(x, PerAxisConst(ctx, mul, 1, rank, perm, "scale")), PerAxisConst(ctx, add, 1, rank, perm, "shift"));
  ctx.Out(0, y, perm);
}

// (x - mean) / sqrt(var + eps) over `axes` (stored positions).
int Normalize(NodeContext& ctx, int x, const std::vector<int32_t>& axes, float eps) {
  auto& b = ctx.b();
  const int mean = b.Mean(x, axes, true);
  const int centered = b.Sub(x, mean);
  const int var = b.Mean(b.Mul(centered, centered), axes, true);
  return b.Mul(centered, b.Rsqrt(b.Add(var, ctx.ScalarF32(eps))));
}

void LayerNorm(NodeContext& ctx) {
  const int rank = ctx.Rank(0);
  const int axis = NormalizeAxis(ctx.Int("axis", -1), rank, ctx.node().Label());
  std::vector<int> idx = {0, 1};
  if (ctx.Has(2)) idx.push_back(2);
  Perm perm;
  const auto t = ctx.Aligned(idx, &perm);
  std::vector<int32_t> axes;
  for (int a = axis; a < rank; ++a) axes.push_back(StoredAxis(perm, a));
  std::sort(axes.begin(), axes.end());
  auto& b = ctx.b();
  // (x - mean) * rsqrt(var + eps); Mean and InvStdDev are outputs 1 and 2
  // (reduced axes kept as size 1).
  const int mean = b.Mean(t[0], axes, true);
  const int centered = b.Sub(t[0], mean);
  const int inv_std =
      b.Rsqrt(b.Add(b.Mean(b.Mul(centered, centered), axes, true), ctx.ScalarF32(ctx.Float("epsilon", 1e-5f))));
  int y = b.Mul(b.Mul(centered, inv_std), t[1]);
  if (ctx.Has(2)) y = b.Add(y, t[2]);
  ctx.Out(0, y, perm);
  if (ctx.HasOutput(1)) ctx.Out(1, mean, perm);
  if (ctx.HasOutput(2)) ctx.Out(2, inv_std, perm);
}

void InstanceNorm(NodeContext& ctx) {
  const int rank = ctx.Rank(0);
  if (rank < 3) ctx.BadModel("input rank < 3");
  const Perm perm = ctx.PermOf(0);
  const int x = ctx.TensorIn(0, perm);
  std::vector<int32_t> axes;
  for (int a = 2; a < rank; ++a) axes.push_back(StoredAxis(perm, a));
  std::sort(axes.begin(), axes.end());
  auto& b = ctx.b();
  const int y = Normalize(ctx, x, axes, ctx.Float("epsilon", 1e-5f));
  ctx.Out(0,
          b.Add(b.Mul(y, PerAxisConst(ctx, ctx.ConstFloats(1), 1, rank, perm, "scale")),
                PerAxisConst(ctx, ctx.ConstFloats(2), 1, rank, perm, "bias")),
          perm);
}

// MeanVarianceNormalization (ONNX's function body): (x - mean) /
// (sqrt(var) + 1e-9) over `axes`, in the input's layout.
void MeanVarianceNorm(NodeContext& ctx) {
  const int rank = ctx.Rank(0);
  const Perm perm = ctx.PermOf(0);
  auto& b = ctx.b();
  const int x = ctx.TensorIn(0, perm);
  std::vector<int32_t> axes;
  for (int64_t a : ctx.Ints("axes", {0, 2, 3}))
    axes.push_back(StoredAxis(perm, NormalizeAxis(a, rank, ctx.node().Label())));
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  const int mean = b.Mean(x, axes, true);
  const int centered = b.Sub(x, mean);
  const int std_dev = b.Sqrt(b.Mean(b.Mul(centered, centered), axes, true));
  ctx.Out(0, b.Div(centered, b.Add(std_dev, ctx.ScalarF32(1e-9f))), perm);
}

}  // namespace

void RegisterNormalization(Registry& r) {
  r.Add("BatchNormalization", BatchNorm);
  r.Add("LayerNormalization", LayerNorm);
  r.Add("InstanceNormalization", InstanceNorm);
  r.Add("MeanVarianceNormalization", MeanVarianceNorm);
}

}  // namespace gpuclean::onnx::ops
