// ctest-labels: litert
// ADD against LiteRT.js, all cases in one graph (one LiteRT.js run): float32
// over every broadcasting pattern up to rank 6 (same shape, scalars on either
// side, size-1 dims, odd and large sizes), int32 with broadcasting, each
// fused activation on float32 and int32 (TANH and SIGN_BIT are ignored by
// LiteRT: no clamp), int64 (made inside the graph with CASTs), constant
// operands (a constant-only ADD is folded at prepare), ±inf and NaN.
// On ours: int32 wrap-around, dtype rejection.
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

int OpAdd(GraphBuilder& b, int x, int y) { return b.Add(x, y); }

TEST(Add, MatchesLiteRt) {
  CaseGraph g;
  GraphBuilder& b = g.b();
  g.AddBinary(BroadcastPairs(), OpAdd, Uniform(-10, 10), Uniform(-10, 10), 100);
  g.AddBinary(BroadcastPairs(), OpAdd, Ints(-100000, 100000), Ints(-100000, 100000), 200);

  const int x = g.Input(RandomF32({3, 17}, 11, -4, 4));
  const int y = g.Input(RandomF32({3, 1}, 12, -4, 4));
  const int i = g.Input(RandomI32({3, 17}, 13, -4, 4));
  const int j = g.Input(RandomI32({17}, 14, -4, 4));
  for (auto act :
       {tfl::ActivationFunctionType_RELU, tfl::ActivationFunctionType_RELU6, tfl::ActivationFunctionType_RELU_N1_TO_1,
        tfl::ActivationFunctionType_TANH, tfl::ActivationFunctionType_SIGN_BIT}) {
    g.Output(b.Add(x, y, act));
    g.Output(b.Add(y, x, act));
    g.Output(b.Add(i, j, act));
  }

  const int r = b.Add(b.Cast(i, kI64), b.Cast(j, kI64), tfl::ActivationFunctionType_RELU6);
  g.Output(b.Cast(r, kI32));
  g.Output(b.Cast(b.Add(b.Cast(j, kI64), b.Cast(i, kI64)), kI32));

  const int c = b.ConstF32("c", {17}, {0.5f, -1.5f, 2.0f, 100.0f, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, -12});
  const int k = b.ConstF32("k", {3, 1}, {1.0f, 2.0f, 3.0f});
  g.Output(b.Add(x, c));
  g.Output(b.Add(c, x, tfl::ActivationFunctionType_RELU));
  g.Output(b.Add(b.Add(c, k), x));

  const float inf = INFINITY;
  g.Output(b.Add(g.Input(F32({5}, {inf, inf, -inf, NAN, 3e38f})), g.Input(F32({5}, {1.0f, -inf, -inf, 1.0f, 3e38f}))));
  g.ExpectMatches();
}

TEST(Add, Int32Wraps) {
  GraphBuilder b;
  const int i = b.Input("i", kI32, {3});
  const int j = b.Input("j", kI32, {3});
  b.Output(b.Add(i, j));
  const auto out = RunOurs(b.Finish(), {I32({3}, {2147483647, -2147483647 - 1, 5}), I32({3}, {1, -1, -7})});
  EXPECT_EQ(ValuesOf<int32_t>(out[0]), (std::vector<int32_t>{-2147483647 - 1, 2147483647, -2}));
}

TEST(Add, RejectsUnsupportedDtypes) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_INT16, {3});
  b.Output(b.Add(x, x));
  ExpectInterpreterRefuses(b.Finish());
}

}  // namespace
}  // namespace gpuclean::testing::ewt
