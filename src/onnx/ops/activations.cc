// Activations: one TFLite op where TFLite has it, short elementwise chains of
// ops every GPU delegate runs where it does not. Layout passes through.
#include <cmath>
#include <limits>

#include "onnx/ops/ops.h"

namespace gpuclean::onnx::ops {
namespace {

// clamp(x, lo, hi) with the fused TFLite activation when the bounds are one.
int Clamp(NodeContext& ctx, int x, float lo, float hi) {
  auto& b = ctx.b();
  constexpr float kInf = std::numeric_limits<float>::infinity();
  if (lo == 0.0f && hi == 6.0f) return b.Relu6(x);
  if (lo == 0.0f && hi == kInf) return b.Relu(x);
  if (lo == -1.0f && hi == 1.0f) return b.ReluN1To1(x);
  int y = x;
  if (lo > -kInf) y = b.Maximum(y, ctx.ScalarF32(lo));
  if (hi < kInf) y = b.Minimum(y, ctx.ScalarF32(hi));
  if (y == x) y = b.Reshape(x, b.shape(x));
  return y;
}

void Clip(NodeContext& ctx) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const Perm perm = ctx.PermOf(0);
  const int x = ctx.TensorIn(0, perm);
  const bool runtime_bounds = (ctx.Has(1) && !ctx.IsConst(1)) || (ctx.Has(2) && !ctx.IsConst(2));
  if (ctx.b().tensor(x).dtype != tfl::TensorType_FLOAT32 || runtime_bounds) {
    // Integer clips (shape arithmetic) use integer bounds; bounds computed at
    // run time (a log-mel floor `max(x) - 80`) are tensors too.
    auto& b = ctx.b();
    int y = x;
    if (ctx.Has(1)) y = b.Maximum(y, ctx.TensorIn(1, {}));
    if (ctx.Has(2)) y = b.Minimum(y, ctx.TensorIn(2, {}));
    if (y == x) y = b.Reshape(x, b.shape(x));
    ctx.Out(0, y, perm);
    return;
  }
  float lo = ctx.Float("min", -kInf), hi = ctx.Float("max", kInf);
  if (ctx.Has(1)) lo = ctx.ConstFloats(1).at(0);
  if (ctx.Has(2)) hi = ctx.ConstFloats(2).at(0);
  ctx.Out(0, Clamp(ctx, x, lo, hi), perm);
}

void LeakyRelu(NodeContext& ctx) {
  const Perm perm = ctx.PermOf(0);
  ctx.Out(0, ctx.b().LeakyRelu(ctx.TensorIn(0, perm), ctx.Float("alpha", 0.01f)), perm);
}

void Elu(NodeContext& ctx) {
  auto& b = ctx.b();
  const Perm perm = ctx.PermOf(0);
  const int x = ctx.TensorIn(0, perm);
  const float alpha = ctx.Float("alpha", 1.0f);
  if (alpha == 1.0f) {
    ctx.Out(0, b.Elu(x), perm);
    return;
  }
  // x > 0 ? x : alpha (e^x - 1) == relu(x) + alpha (e^{min(x,0)} - 1)
  const int neg = b.Mul(b.Sub(b.Exp(b.Minimum(x, ctx.ScalarF32(0))), ctx.ScalarF32(1)), ctx.ScalarF32(alpha));
  ctx.Out(0, b.Add(b.Relu(x), neg), perm);
}

void Selu(NodeContext& ctx) {
  auto& b = ctx.b();
  const Perm perm = ctx.PermOf(0);
  const int x = ctx.TensorIn(0, perm);
  const float alpha = ctx.Float("alpha", 1.67326319217681884765625f);
  const float gamma = ctx.Float("gamma", 1.05070102214813232421875f);
  const int neg = b.Mul(b.Sub(b.Exp(b.Minimum(x, ctx.ScalarF32(0))), ctx.ScalarF32(1)), ctx.ScalarF32(alpha));
  ctx.Out(0, b.Mul(b.Add(b.Relu(x), neg), ctx.ScalarF32(gamma)), perm);
}

void Celu(NodeContext& ctx) {
  auto& b = ctx.b();
  const Perm perm = ctx.PermOf(0);
  const int x = ctx.TensorIn(0, perm);
  const float alpha = ctx.Float("alpha", 1.0f);
  const int scaled = b.Mul(x, ctx.ScalarF32(1.0f / alpha));
  const int neg = b.Mul(b.Sub(b.Exp(b.Minimum(scaled, ctx.ScalarF32(0))), ctx.ScalarF32(1)), ctx.ScalarF32(alpha));
  ctx.Out(0, b.Add(b.Relu(x), neg), perm);
}

void HardSigmoid(NodeContext& ctx) {
  auto& b = ctx.b();
  const Perm perm = ctx.PermOf(0);
  const int x = ctx.TensorIn(0, perm);
  const int y = b.Add(b.Mul(x, ctx.ScalarF32(ctx.Float("alpha", 0.2f))), ctx.ScalarF32(ctx.Float("beta", 0.5f)));
  ctx.Out(0, Clamp(ctx, y, 0.0f, 1.0f), perm);
}

// Softplus = log(1 + e^x), computed as max(x, 0) + log(1 + e^{-|x|}) so large
// inputs do not overflow.
int Softplus(NodeContext& ctx, int x) {
  auto& b = ctx.b();
  return b.Add(b.Relu(x), b.Log(b.Add(b.Exp(b.Neg(b.Abs(x))), ctx.ScalarF32(1))));
}

void SoftplusOp(NodeContext& ctx) {
  const Perm perm = ctx.PermOf(0);
  ctx.Out(0, Softplus(ctx, ctx.TensorIn(0, perm)), perm);
}

void Mish(NodeContext& ctx) {
  const Perm perm = ctx.PermOf(0);
  const int x = ctx.TensorIn(0, perm);
  ctx.Out(0, ctx.b().Mul(x, ctx.b().Tanh(Softplus(ctx, x))), perm);
}

void Softsign(NodeContext& ctx) {
  auto& b = ctx.b();
  const Perm perm = ctx.PermOf(0);
  const int x = ctx.TensorIn(0, perm);
  ctx.Out(0, b.Div(x, b.Add(b.Abs(x), ctx.ScalarF32(1))), perm);
}

void ThresholdedRelu(NodeContext& ctx) {
  auto& b = ctx.b();
  const Perm perm = ctx.PermOf(0);
  const int x = ctx.TensorIn(0, perm);
  const int keep = b.Cast(b.Greater(x, ctx.ScalarF32(ctx.Float("alpha", 1.0f))), tfl::TensorType_FLOAT32);
  ctx.Out(0, b.Mul(x, keep), perm);
}

void PRelu(NodeContext& ctx) {
  Perm perm;
  const auto t = ctx.Aligned({0, 1}, &perm);
  auto& b = ctx.b();
  // TFLite's PRELU wants alpha of the input's rank less leading ones; the
  // max/min form works for any broadcast and is what the GPU delegates fuse.
  const int x = t[0];
  const int pos = b.Relu(x);
  const int neg = b.Mul(b.Minimum(x, ctx.ScalarF32(0)), t[1]);
  ctx.Out(0, b.Add(pos, neg), perm);
}

// Inference: the identity, and a mask of all true. Training mode drops at
// random, which no converted graph reproduces; a ratio of 0 is the identity.
void Dropout(NodeContext& ctx) {
  const bool training = ctx.Has(2) && ctx.ConstInts(2).at(0) != 0;
  const float ratio = ctx.Has(1) ? ctx.ConstFloats(1).at(0) : ctx.Float("ratio", 0.5f);
  if (training && ratio != 0.0f) ctx.Fail("training-mode Dropout (random dropping) is not supported");
  const Value& v = ctx.In(0);
  if (v.constant)
    ctx.OutConst(0, *v.constant);
  else
    ctx.Out(0, v.tensor, v.perm);
  if (ctx.HasOutput(1)) {
    npy::Array mask;
    mask.dtype = tfl::TensorType_BOOL;
    mask.shape = ctx.Shape(0);
    mask.data.assign(static_cast<size_t>(NumElements(mask.shape)), 1);
    ctx.OutConst(1, std::move(mask));
  }
}

// Shrink: x < -lambd ? x + bias : x > lambd ? x - bias : 0.
void Shrink(NodeContext& ctx) {
  auto& b = ctx.b();
  const Perm perm = ctx.PermOf(0);
  const int x = ctx.TensorIn(0, perm);
  if (b.tensor(x).dtype != tfl::TensorType_FLOAT32) ctx.Fail("Shrink on non-float inputs is not supported");
  const float lambd = ctx.Float("lambd", 0.5f), bias = ctx.Float("bias", 0.0f);
  const int below = b.Cast(b.Less(x, ctx.ScalarF32(-lambd)), tfl::TensorType_FLOAT32);
  const int above = b.Cast(b.Greater(x, ctx.ScalarF32(lambd)), tfl::TensorType_FLOAT32);
  const int y = b.Add(b.Mul(b.Add(x, ctx.ScalarF32(bias)), below), b.Mul(b.Sub(x, ctx.ScalarF32(bias)), above));
  ctx.Out(0, y, perm);
}

void Identity(NodeContext& ctx) {
  const Value& v = ctx.In(0);
  if (v.constant) {
    ctx.OutConst(0, *v.constant);
    return;
  }
  ctx.Out(0, v.tensor, v.perm);
}

}  // namespace

void RegisterActivations(Registry& r) {
  r.Add("Relu", [](NodeContext& c) { LowerUnary(c, tfl::BuiltinOperator_RELU); });
  // The opset-20 op, and what FuseExactGelu makes of the decomposed form.
  r.Add("Gelu", [](NodeContext& c) {
    const Perm perm = c.PermOf(0);
    const int x = c.TensorIn(0, perm);
    if (c.b().tensor(x).dtype != tfl::TensorType_FLOAT32) c.Fail("Gelu of a non-float tensor is not supported");
    c.Out(0, c.b().Gelu(x, c.Str("approximate", "none") == "tanh"), perm);
  });
  r.Add("Sigmoid", [](NodeContext& c) { LowerUnary(c, tfl::BuiltinOperator_LOGISTIC); });
  r.Add("Tanh", [](NodeContext& c) { LowerUnary(c, tfl::BuiltinOperator_TANH); });
  r.Add("HardSwish", [](NodeContext& c) { LowerUnary(c, tfl::BuiltinOperator_HARD_SWISH); });
  r.Add("Clip", Clip);
  r.Add("LeakyRelu", LeakyRelu);
  r.Add("Elu", Elu);
  r.Add("Selu", Selu);
  r.Add("Celu", Celu);
  r.Add("HardSigmoid", HardSigmoid);
  r.Add("Softplus", SoftplusOp);
  r.Add("Softsign", Softsign);
  r.Add("Mish", Mish);
  r.Add("ThresholdedRelu", ThresholdedRelu);
  r.Add("PRelu", PRelu);
  r.Add("Identity", Identity);
  r.Add("Dropout", Dropout);
  r.Add("Shrink", Shrink);
}

}  // namespace gpuclean::onnx::ops
