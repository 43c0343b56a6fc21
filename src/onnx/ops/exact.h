#pragma once
// Exact constructions shared by lowerings that need an op TFLite (or our
// interpreter) lacks.
#include "onnx/ops/ops.h"

namespace gpuclean::onnx::ops {

// Round half to even (ONNX Round, std::nearbyint) of a float32 tensor:
// f = floor(x), d = x - f, f + (d > .5) + (d == .5) * (f - 2 floor(f / 2)).
// Every step is exact in float32.
inline int RoundHalfEven(NodeContext& ctx, int x) {
  auto& b = ctx.b();
  const int f = b.Floor(x);
  const int d = b.Sub(x, f);
  const int half = ctx.ScalarF32(0.5f);
  const int odd = b.Sub(f, b.Mul(b.Floor(b.Mul(f, half)), ctx.ScalarF32(2.0f)));  // 0 or 1
  const int up = b.Cast(b.Greater(d, half), tfl::TensorType_FLOAT32);
  const int tie = b.Mul(b.Cast(b.Equal(d, half), tfl::TensorType_FLOAT32), odd);
  return b.Add(f, b.Add(up, tie));
}

}  // namespace gpuclean::onnx::ops
