// DIV against LiteRT.js: float32 over every broadcasting pattern up to rank 6
// (divisors kept away from 0), each fused activation, x/0 = ±inf and 0/0 =
// NaN; int32 truncating toward zero (-7/2 = -3) with broadcasting; an int32
// zero divisor fails on both sides.
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

int Div(GraphBuilder& b, int x, int y) { return b.Div(x, y); }

// Non-zero int32 values in [lo, hi].
InputMaker NonZeroInts(int32_t lo, int32_t hi) {
  return [lo, hi](const Shape& s, uint32_t seed) {
    npy::Array a = RandomI32(s, seed, lo, hi);
    for (int64_t k = 0; k < a.num_elements(); ++k)
      if (a.as<int32_t>()[k] == 0) a.as<int32_t>()[k] = 1;
    return a;
  };
}

TEST(Div, Float32Broadcasting) {
  auto pairs = BroadcastPairs();
  for (const auto& p : HighRankPairs()) pairs.push_back(p);
  ExpectBinaryMatches(pairs, kF32, Div, Uniform(-10, 10), SignedAway(0.25f, 4.0f), 500);
}

TEST(Div, FusedActivationsAndSpecialValues) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {3, 17});
  const int y = b.Input("y", kF32, {17});
  const int s = b.Input("s", kF32, {6});
  const int t = b.Input("t", kF32, {6});
  for (auto act : {tfl::ActivationFunctionType_NONE, tfl::ActivationFunctionType_RELU,
                   tfl::ActivationFunctionType_RELU6, tfl::ActivationFunctionType_RELU_N1_TO_1,
                   tfl::ActivationFunctionType_TANH})
    b.Output(b.Div(x, y, act));
  b.Output(b.Div(s, t));
  const ir::Model model = b.Finish();
  const float inf = INFINITY;
  ExpectMatchesLiteRt(model, {RandomF32({3, 17}, 41, -8, 8), RandomSignedF32({17}, 42, 0.5f, 2.0f),
                              F32({6}, {1.0f, -1.0f, 0.0f, inf, 5.0f, NAN}), F32({6}, {0.0f, 0.0f, 0.0f, 2.0f, inf, 1.0f})});
}

TEST(Div, Int32TruncatesTowardZero) {
  ExpectBinaryMatches(BroadcastPairs(), kI32, Div, Ints(-1000, 1000), NonZeroInts(-9, 9), 600);
  GraphBuilder b;
  const int i = b.Input("i", kI32, {8});
  const int j = b.Input("j", kI32, {8});
  b.Output(b.Div(i, j, tfl::ActivationFunctionType_RELU6));
  b.Output(b.Div(i, j));
  const npy::Array a = I32({8}, {-7, 7, -7, 7, 0, 5, -1, 9}), c = I32({8}, {2, 2, -2, -2, 3, 5, 3, -4});
  const ir::Model model = b.Finish();
  ExpectMatchesLiteRt(model, {a, c});
  EXPECT_EQ(ValuesOf<int32_t>(RunOurs(model, {a, c})[1]), (std::vector<int32_t>{-3, 3, 3, -3, 0, 1, 0, -2}));
}

TEST(Div, Int32ZeroDivisorFails) {
  GraphBuilder b;
  const int i = b.Input("i", kI32, {3});
  const int j = b.Input("j", kI32, {3});
  b.Output(b.Div(i, j));
  const ir::Model model = b.Finish();
  const std::vector<npy::Array> inputs = {I32({3}, {1, 2, 3}), I32({3}, {1, 0, 1})};
  ExpectInvokeFails(model, inputs, "division by 0");
  ExpectLiteRtFails(model, inputs);
}

}  // namespace
}  // namespace gpuclean::testing::ewt
