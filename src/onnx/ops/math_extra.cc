// Elementwise ops TFLite has no kernel for, built exactly from ones it has:
//   Mod    fmod=0 (integers, the divisor's sign): a - FLOOR_DIV(a, b) * b
//          fmod=1 (C fmod, the dividend's sign): integers a - DIV(a, b) * b
//          (DIV truncates); floats a - trunc(a / b) * b (bounded: one
//          rounding of the quotient)
// (Round is TFLite's ROUND, half to even as ONNX's.)
// All of them run in the input's layout. (Shrink lives in activations.cc.)
#include <cmath>

#include <fmt/format.h>

#include "onnx/ops/exact.h"

namespace gpuclean::onnx::ops {
namespace {

void Mod(NodeContext& ctx) {
  Perm perm;
  const auto t = ctx.Aligned({0, 1}, &perm);
  auto& b = ctx.b();
  const int a = t[0], d = t[1];
  const auto dtype = b.tensor(a).dtype;
  const bool fmod = ctx.Int("fmod", 0) != 0;
  int y;
  if (dtype == tfl::TensorType_FLOAT32) {
    if (!fmod) ctx.BadModel("Mod of floats needs fmod=1");
    const int q = b.Div(a, d);
    // trunc(q) = q >= 0 ? floor(q) : ceil(q)
    const int tq = b.SelectV2(b.GreaterEqual(q, ctx.ScalarF32(0)), b.Floor(q), b.Ceil(q));
    y = b.Sub(a, b.Mul(tq, d));
  } else if (dtype == tfl::TensorType_INT32) {
    y = b.Sub(a, b.Mul(fmod ? b.Div(a, d) : b.FloorDiv(a, d), d));
  } else {
    ctx.Fail(fmt::format("Mod of {} tensors is not supported", ir::DTypeName(dtype)));
  }
  ctx.Out(0, y, perm);
}

void Round(NodeContext& ctx) {
  const Perm perm = ctx.PermOf(0);
  const int x = ctx.TensorIn(0, perm);
  if (ctx.b().tensor(x).dtype != tfl::TensorType_FLOAT32) ctx.Fail("Round of non-float tensors is not supported");
  ctx.Out(0, ctx.b().Round(x), perm);
}

}  // namespace

void RegisterMathExtra(Registry& r) {
  r.Add("Mod", Mod);
  r.Add("Round", Round);
}

}  // namespace gpuclean::onnx::ops
