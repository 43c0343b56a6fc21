// ctest-labels: litert
// MUL against LiteRT.js, all cases in one graph (one LiteRT.js run): float32
// over every broadcasting pattern up to rank 6 (same shape, scalars on either
// side, size-1 dims, odd and large sizes), int32 with broadcasting, each
// fused activation on float32 and int32 (TANH and SIGN_BIT are ignored by
// LiteRT: no clamp), int64 (made inside the graph with CASTs), constant
// operands (a constant-only MUL is folded at prepare), ±inf and NaN.
// On ours: int32 wrap-around, dtype rejection.
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

int OpMul(GraphBuilder& b, int x, int y) { return b.Mul(x, y); }

TEST(Mul, MatchesLiteRt) {
  CaseGraph g;
  GraphBuilder& b = g.b();
  g.AddBinary(BroadcastPairs(), OpMul, Uniform(-4, 4), Uniform(-4, 4), 100);
  g.AddBinary(BroadcastPairs(), OpMul, Ints(-30000, 30000), Ints(-30000, 30000), 200);

  const int x = g.Input(RandomF32({3, 17}, 11, -4, 4));
  const int y = g.Input(RandomF32({3, 1}, 12, -4, 4));
  const int i = g.Input(RandomI32({3, 17}, 13, -4, 4));
  const int j = g.Input(RandomI32({17}, 14, -4, 4));
  for (auto act :
       {tfl::ActivationFunctionType_RELU, tfl::ActivationFunctionType_RELU6, tfl::ActivationFunctionType_RELU_N1_TO_1,
        tfl::ActivationFunctionType_TANH, tfl::ActivationFunctionType_SIGN_BIT}) {
    g.Output(b.Mul(x, y, act));
    g.Output(b.Mul(y, x, act));
    g.Output(b.Mul(i, j, act));
  }

  const int r = b.Mul(b.Cast(i, kI64), b.Cast(j, kI64), tfl::ActivationFunctionType_RELU6);
  g.Output(b.Cast(r, kI32));
  g.Output(b.Cast(b.Mul(b.Cast(j, kI64), b.Cast(i, kI64)), kI32));

  const int c = b.ConstF32("c", {17}, {0.5f, -1.5f, 2.0f, 100.0f, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, -12});
  const int k = b.ConstF32("k", {3, 1}, {1.0f, 2.0f, 3.0f});
  g.Output(b.Mul(x, c));
  g.Output(b.Mul(c, x, tfl::ActivationFunctionType_RELU));
  g.Output(b.Mul(b.Mul(c, k), x));

  const float inf = INFINITY;
  g.Output(b.Mul(g.Input(F32({5}, {inf, inf, -inf, NAN, 3e38f})), g.Input(F32({5}, {1.0f, -inf, -inf, 1.0f, 3e38f}))));
  g.ExpectMatches();
}

TEST(Mul, Int32Wraps) {
  GraphBuilder b;
  const int i = b.Input("i", kI32, {3});
  const int j = b.Input("j", kI32, {3});
  b.Output(b.Mul(i, j));
  const auto out = RunOurs(b.Finish(), {I32({3}, {65536, -2147483647 - 1, 5}), I32({3}, {65536, -1, -7})});
  EXPECT_EQ(ValuesOf<int32_t>(out[0]), (std::vector<int32_t>{0, -2147483647 - 1, -35}));
}

TEST(Mul, RejectsUnsupportedDtypes) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_INT16, {3});
  b.Output(b.Mul(x, x));
  ExpectInterpreterRefuses(b.Finish());
}

}  // namespace
}  // namespace gpuclean::testing::ewt
