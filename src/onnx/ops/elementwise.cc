// Elementwise ONNX ops: numpy-broadcast binaries, comparisons, logic, Where,
// the variadic Max/Min/Sum/Mean, the one-to-one unaries and the
// trigonometric/hyperbolic functions built from them. All of them run
// in whatever layout their inputs arrive in (NodeContext::Aligned).
#include <cmath>
#include <limits>

#include "onnx/ops/ops.h"

namespace gpuclean::onnx::ops {
namespace {

bool Arithmetic(tfl::BuiltinOperator code) {
  return code == tfl::BuiltinOperator_ADD || code == tfl::BuiltinOperator_SUB || code == tfl::BuiltinOperator_MUL ||
         code == tfl::BuiltinOperator_DIV;
}

void Binary(NodeContext& ctx, tfl::BuiltinOperator code) {
  Perm perm;
  const auto t = ctx.Aligned({0, 1}, &perm);
  auto& b = ctx.b();
  const ir::DType dtype = b.tensor(t[0]).dtype;
  if (Arithmetic(code) &&
      (dtype == tfl::TensorType_UINT8 || dtype == tfl::TensorType_INT8 || dtype == tfl::TensorType_INT16)) {
    // TFLite's arithmetic on 8/16-bit integers is quantized arithmetic; ONNX's
    // is plain integer arithmetic that wraps. Computed in int32 (exact for
    // these ranges; integer division truncates as ONNX's does) and cast
    // back, which wraps.
    const int y = b.Binary(code, b.Cast(t[0], tfl::TensorType_INT32), b.Cast(t[1], tfl::TensorType_INT32));
    ctx.Out(0, b.Cast(y, dtype), perm);
    return;
  }
  ctx.Out(0, b.Binary(code, t[0], t[1]), perm);
}

// ONNX's Pow allows a base and an exponent of different types; the result
// has the base's. Mixed types are computed in float32.
void Pow(NodeContext& ctx) {
  Perm perm;
  const auto t = ctx.Aligned({0, 1}, &perm);
  auto& b = ctx.b();
  const ir::DType da = b.tensor(t[0]).dtype, db = b.tensor(t[1]).dtype;
  if (da == db) {
    ctx.Out(0, b.Binary(tfl::BuiltinOperator_POW, t[0], t[1]), perm);
    return;
  }
  const int base = da == tfl::TensorType_FLOAT32 ? t[0] : b.Cast(t[0], tfl::TensorType_FLOAT32);
  const int exponent = db == tfl::TensorType_FLOAT32 ? t[1] : b.Cast(t[1], tfl::TensorType_FLOAT32);
  int y = b.Binary(tfl::BuiltinOperator_POW, base, exponent);
  if (da != tfl::TensorType_FLOAT32) y = b.Cast(y, da);
  ctx.Out(0, y, perm);
}

void Variadic(NodeContext& ctx, tfl::BuiltinOperator code, bool mean) {
  std::vector<int> indices;
  for (int i = 0; i < ctx.num_inputs(); ++i)
    if (ctx.Has(i)) indices.push_back(i);
  if (indices.empty()) ctx.BadModel("has no inputs");
  Perm perm;
  const auto t = ctx.Aligned(indices, &perm);
  int acc = t[0];
  for (size_t i = 1; i < t.size(); ++i) acc = ctx.b().Binary(code, acc, t[i]);
  if (mean && t.size() > 1) acc = ctx.b().Mul(acc, ctx.ScalarF32(1.0f / static_cast<float>(t.size())));
  if (t.size() == 1) acc = ctx.b().Reshape(acc, ctx.b().shape(acc));
  ctx.Out(0, acc, perm);
}

// erf(x) = sign(x) (1 - t (a1 + t (a2 + t (a3 + t (a4 + t a5)))) e^{-x^2}),
// t = 1 / (1 + p |x|) (Abramowitz & Stegun 7.1.26, |error| <= 1.5e-7): TFLite
// has no ERF, and this uses only ops every GPU delegate runs.
void Erf(NodeContext& ctx) {
  auto& b = ctx.b();
  const Perm perm = ctx.PermOf(0);
  const int x = ctx.TensorIn(0, perm);
  const int ax = b.Abs(x);
  const int t = b.Div(ctx.ScalarF32(1.0f), b.Add(b.Mul(ax, ctx.ScalarF32(0.3275911f)), ctx.ScalarF32(1.0f)));
  const float a[] = {0.254829592f, -0.284496736f, 1.421413741f, -1.453152027f, 1.061405429f};
  int poly = ctx.ScalarF32(a[4]);
  for (int i = 3; i >= 0; --i) poly = b.Add(b.Mul(poly, t), ctx.ScalarF32(a[i]));
  poly = b.Mul(poly, t);
  const int e = b.Exp(b.Neg(b.Mul(x, x)));
  const int y = b.Sub(ctx.ScalarF32(1.0f), b.Mul(poly, e));  // erf(|x|)
  // sign(x) * y == y * x / |x|, with x == 0 giving 0 via the clamp below.
  const int sign = b.Sub(b.Cast(b.Greater(x, ctx.ScalarF32(0.0f)), tfl::TensorType_FLOAT32),
                         b.Cast(b.Less(x, ctx.ScalarF32(0.0f)), tfl::TensorType_FLOAT32));
  ctx.Out(0, b.Mul(y, sign), perm);
}

void Sign(NodeContext& ctx) {
  auto& b = ctx.b();
  const Perm perm = ctx.PermOf(0);
  const int x = ctx.TensorIn(0, perm);
  const auto dtype = b.tensor(x).dtype;
  const int zero = dtype == tfl::TensorType_FLOAT32 ? ctx.ScalarF32(0) : ctx.ConstI32({}, {0});
  ctx.Out(0, b.Sub(b.Cast(b.Greater(x, zero), dtype), b.Cast(b.Less(x, zero), dtype)), perm);
}

void IsNaN(NodeContext& ctx) {
  const Perm perm = ctx.PermOf(0);
  const int x = ctx.TensorIn(0, perm);
  ctx.Out(0, ctx.b().NotEqual(x, x), perm);
}

void IsInf(NodeContext& ctx) {
  auto& b = ctx.b();
  const Perm perm = ctx.PermOf(0);
  const int x = ctx.TensorIn(0, perm);
  const bool pos = ctx.Int("detect_positive", 1) != 0, neg = ctx.Int("detect_negative", 1) != 0;
  constexpr float kInf = std::numeric_limits<float>::infinity();
  int y;
  if (pos && neg)
    y = b.Equal(b.Abs(x), ctx.ScalarF32(kInf));
  else if (pos)
    y = b.Equal(x, ctx.ScalarF32(kInf));
  else if (neg)
    y = b.Equal(x, ctx.ScalarF32(-kInf));
  else
    y = b.LogicalAnd(b.Equal(x, x), b.NotEqual(x, x));  // all false
  ctx.Out(0, y, perm);
}

void Where(NodeContext& ctx) {
  Perm perm;
  const auto t = ctx.Aligned({0, 1, 2}, &perm);
  ctx.Out(0, ctx.b().SelectV2(t[0], t[1], t[2]), perm);
}

void Reciprocal(NodeContext& ctx) {
  const Perm perm = ctx.PermOf(0);
  ctx.Out(0, ctx.b().Div(ctx.ScalarF32(1.0f), ctx.TensorIn(0, perm)), perm);
}

void Xor(NodeContext& ctx) {
  Perm perm;
  const auto t = ctx.Aligned({0, 1}, &perm);
  ctx.Out(0, ctx.b().NotEqual(t[0], t[1]), perm);
}

void Div(NodeContext& ctx) { Binary(ctx, tfl::BuiltinOperator_DIV); }

// Trigonometric and hyperbolic functions TFLite lacks, from SIN, COS, EXP,
// LOG, SQRT and arithmetic (ops every GPU delegate runs).
using UnaryFn = int (*)(NodeContext&, int);

void Elementwise(NodeContext& ctx, UnaryFn fn) {
  const Perm perm = ctx.PermOf(0);
  ctx.Out(0, fn(ctx, ctx.TensorIn(0, perm)), perm);
}

int Tan(NodeContext& ctx, int x) { return ctx.b().Div(ctx.b().Sin(x), ctx.b().Cos(x)); }

int Sinh(NodeContext& ctx, int x) {
  auto& b = ctx.b();
  return b.Mul(b.Sub(b.Exp(x), b.Exp(b.Neg(x))), ctx.ScalarF32(0.5f));
}

int Cosh(NodeContext& ctx, int x) {
  auto& b = ctx.b();
  return b.Mul(b.Add(b.Exp(x), b.Exp(b.Neg(x))), ctx.ScalarF32(0.5f));
}

// sign(x) log(|x| + sqrt(x^2 + 1)): no cancellation for negative x.
int Asinh(NodeContext& ctx, int x) {
  auto& b = ctx.b();
  const int ax = b.Abs(x);
  const int y = b.Log(b.Add(ax, b.Sqrt(b.Add(b.Mul(x, x), ctx.ScalarF32(1)))));
  const int sign = b.Sub(b.Cast(b.Greater(x, ctx.ScalarF32(0)), tfl::TensorType_FLOAT32),
                         b.Cast(b.Less(x, ctx.ScalarF32(0)), tfl::TensorType_FLOAT32));
  return b.Mul(y, sign);
}

int Acosh(NodeContext& ctx, int x) {
  auto& b = ctx.b();
  return b.Log(b.Add(x, b.Sqrt(b.Sub(b.Mul(x, x), ctx.ScalarF32(1)))));
}

int Atanh(NodeContext& ctx, int x) {
  auto& b = ctx.b();
  const int one = ctx.ScalarF32(1);
  return b.Mul(b.Log(b.Div(b.Add(one, x), b.Sub(one, x))), ctx.ScalarF32(0.5f));
}

// Cephes' atanf: |x| reduced to [0, tan(pi/8)] (by pi/2 - atan(1/|x|) above
// tan(3pi/8), pi/4 + atan((|x|-1)/(|x|+1)) above tan(pi/8)), then a degree-9
// odd polynomial; relative error ~1e-7. The reductions are computed for
// every element and selected, so the unused ones may hold infinities.
int Atan(NodeContext& ctx, int x) {
  auto& b = ctx.b();
  const int ax = b.Abs(x);
  const int one = ctx.ScalarF32(1);
  const int big = b.Greater(ax, ctx.ScalarF32(2.414213562373095f));
  const int mid = b.Greater(ax, ctx.ScalarF32(0.4142135623730950f));
  const int r_big = b.Neg(b.Div(one, ax));
  const int r_mid = b.Div(b.Sub(ax, one), b.Add(ax, one));
  const int r = b.SelectV2(big, r_big, b.SelectV2(mid, r_mid, ax));
  const int base = b.SelectV2(big, ctx.ScalarF32(1.5707963267948966f),
                              b.SelectV2(mid, ctx.ScalarF32(0.7853981633974483f), ctx.ScalarF32(0)));
  const int z = b.Mul(r, r);
  int p = ctx.ScalarF32(8.05374449538e-2f);
  p = b.Add(b.Mul(p, z), ctx.ScalarF32(-1.38776856032e-1f));
  p = b.Add(b.Mul(p, z), ctx.ScalarF32(1.99777106478e-1f));
  p = b.Add(b.Mul(p, z), ctx.ScalarF32(-3.33329491539e-1f));
  const int y = b.Add(base, b.Add(b.Mul(b.Mul(p, z), r), r));
  const int sign = b.Sub(b.Cast(b.Greater(x, ctx.ScalarF32(0)), tfl::TensorType_FLOAT32),
                         b.Cast(b.Less(x, ctx.ScalarF32(0)), tfl::TensorType_FLOAT32));
  return b.Mul(y, sign);
}

// asin(x) = atan(x / sqrt(1 - x^2)) (|x| = 1 divides by zero: atan(inf)).
int Asin(NodeContext& ctx, int x) {
  auto& b = ctx.b();
  return Atan(ctx, b.Div(x, b.Sqrt(b.Sub(ctx.ScalarF32(1), b.Mul(x, x)))));
}

int Acos(NodeContext& ctx, int x) { return ctx.b().Sub(ctx.ScalarF32(1.5707963267948966f), Asin(ctx, x)); }

}  // namespace

void RegisterElementwise(Registry& r) {
  r.Add("Add", [](NodeContext& c) { Binary(c, tfl::BuiltinOperator_ADD); });
  r.Add("Sub", [](NodeContext& c) { Binary(c, tfl::BuiltinOperator_SUB); });
  r.Add("Mul", [](NodeContext& c) { Binary(c, tfl::BuiltinOperator_MUL); });
  r.Add("Div", Div);
  r.Add("Pow", Pow);
  r.Add("Equal", [](NodeContext& c) { Binary(c, tfl::BuiltinOperator_EQUAL); });
  r.Add("Less", [](NodeContext& c) { Binary(c, tfl::BuiltinOperator_LESS); });
  r.Add("LessOrEqual", [](NodeContext& c) { Binary(c, tfl::BuiltinOperator_LESS_EQUAL); });
  r.Add("Greater", [](NodeContext& c) { Binary(c, tfl::BuiltinOperator_GREATER); });
  r.Add("GreaterOrEqual", [](NodeContext& c) { Binary(c, tfl::BuiltinOperator_GREATER_EQUAL); });
  r.Add("And", [](NodeContext& c) { Binary(c, tfl::BuiltinOperator_LOGICAL_AND); });
  r.Add("Or", [](NodeContext& c) { Binary(c, tfl::BuiltinOperator_LOGICAL_OR); });
  r.Add("Xor", Xor);
  r.Add("Max", [](NodeContext& c) { Variadic(c, tfl::BuiltinOperator_MAXIMUM, false); });
  r.Add("Min", [](NodeContext& c) { Variadic(c, tfl::BuiltinOperator_MINIMUM, false); });
  r.Add("Sum", [](NodeContext& c) { Variadic(c, tfl::BuiltinOperator_ADD, false); });
  r.Add("Mean", [](NodeContext& c) { Variadic(c, tfl::BuiltinOperator_ADD, true); });
  r.Add("Where", Where);
  r.Add("Not", [](NodeContext& c) { LowerUnary(c, tfl::BuiltinOperator_LOGICAL_NOT); });
  r.Add("Abs", [](NodeContext& c) { LowerUnary(c, tfl::BuiltinOperator_ABS); });
  r.Add("Neg", [](NodeContext& c) { LowerUnary(c, tfl::BuiltinOperator_NEG); });
  r.Add("Exp", [](NodeContext& c) { LowerUnary(c, tfl::BuiltinOperator_EXP); });
  r.Add("Log", [](NodeContext& c) { LowerUnary(c, tfl::BuiltinOperator_LOG); });
  r.Add("Sqrt", [](NodeContext& c) { LowerUnary(c, tfl::BuiltinOperator_SQRT); });
  r.Add("Floor", [](NodeContext& c) { LowerUnary(c, tfl::BuiltinOperator_FLOOR); });
  r.Add("Ceil", [](NodeContext& c) { LowerUnary(c, tfl::BuiltinOperator_CEIL); });
  r.Add("Sin", [](NodeContext& c) { LowerUnary(c, tfl::BuiltinOperator_SIN); });
  r.Add("Cos", [](NodeContext& c) { LowerUnary(c, tfl::BuiltinOperator_COS); });
  r.Add("Reciprocal", Reciprocal);
  r.Add("Erf", Erf);
  r.Add("Sign", Sign);
  r.Add("IsNaN", IsNaN);
  r.Add("IsInf", IsInf);
  r.Add("Tan", [](NodeContext& c) { Elementwise(c, Tan); });
  r.Add("Sinh", [](NodeContext& c) { Elementwise(c, Sinh); });
  r.Add("Cosh", [](NodeContext& c) { Elementwise(c, Cosh); });
  r.Add("Asinh", [](NodeContext& c) { Elementwise(c, Asinh); });
  r.Add("Acosh", [](NodeContext& c) { Elementwise(c, Acosh); });
  r.Add("Atanh", [](NodeContext& c) { Elementwise(c, Atanh); });
  r.Add("Atan", [](NodeContext& c) { Elementwise(c, Atan); });
  r.Add("Asin", [](NodeContext& c) { Elementwise(c, Asin); });
  r.Add("Acos", [](NodeContext& c) { Elementwise(c, Acos); });
}

void LowerUnary(NodeContext& ctx, tfl::BuiltinOperator code) {
  const Perm perm = ctx.PermOf(0);
  ctx.Out(0, ctx.b().Unary(code, ctx.TensorIn(0, perm)), perm);
}

}  // namespace gpuclean::onnx::ops
