// ctest-labels: litert
// DIV against LiteRT.js, all cases in one graph: float32 over every
// broadcasting pattern up to rank 6 (divisors kept away from 0), each fused
// activation, x/0 = ±inf and 0/0 = NaN; int32 truncating toward zero
// (-7/2 = -3) with broadcasting and activations. An int32 zero divisor fails
// on both sides.
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

int OpDiv(GraphBuilder& b, int x, int y) { return b.Div(x, y); }

// Non-zero int32 values in [lo, hi].
InputMaker NonZeroIntsDiv(int32_t lo, int32_t hi) {
  return [lo, hi](const Shape& s, uint32_t seed) {
    npy::Array a = RandomI32(s, seed, lo, hi);
    for (int64_t k = 0; k < a.num_elements(); ++k)
      if (a.as<int32_t>()[k] == 0) a.as<int32_t>()[k] = 1;
    return a;
  };
}

const std::vector<int32_t> kNumDiv = {-7, 7, -7, 7, 0, 5, -1, 9};
const std::vector<int32_t> kDenDiv = {2, 2, -2, -2, 3, 5, 3, -4};

TEST(Div, MatchesLiteRt) {
  CaseGraph g;
  GraphBuilder& b = g.b();
  g.AddBinary(BroadcastPairs(), OpDiv, Uniform(-10, 10), SignedAway(0.25f, 4.0f), 500);
  g.AddBinary(BroadcastPairs(), OpDiv, Ints(-1000, 1000), NonZeroIntsDiv(-9, 9), 600);

  const int x = g.Input(RandomF32({3, 17}, 41, -8, 8));
  const int y = g.Input(RandomSignedF32({17}, 42, 0.5f, 2.0f));
  const int i = g.Input(I32({8}, kNumDiv));
  const int j = g.Input(I32({8}, kDenDiv));
  for (auto act : {tfl::ActivationFunctionType_RELU, tfl::ActivationFunctionType_RELU6,
                   tfl::ActivationFunctionType_RELU_N1_TO_1, tfl::ActivationFunctionType_TANH}) {
    g.Output(b.Div(x, y, act));
    g.Output(b.Div(i, j, act));
  }
  g.Output(b.Div(i, j));
  const float inf = INFINITY;
  g.Output(b.Div(g.Input(F32({6}, {1.0f, -1.0f, 0.0f, inf, 5.0f, NAN})),
                 g.Input(F32({6}, {0.0f, 0.0f, 0.0f, 2.0f, inf, 1.0f}))));
  g.ExpectMatches();
}

TEST(Div, Int32TruncatesTowardZero) {
  GraphBuilder b;
  const int in_i = b.Input("i", kI32, {8});
  const int in_j = b.Input("j", kI32, {8});
  b.Output(b.Div(in_i, in_j));
  EXPECT_EQ(ValuesOf<int32_t>(RunOurs(b.Finish(), {I32({8}, kNumDiv), I32({8}, kDenDiv)})[0]),
            (std::vector<int32_t>{-3, 3, 3, -3, 0, 1, 0, -2}));
}

TEST(Div, Int32ZeroDivisorFails) {
  GraphBuilder b;
  const int in_i = b.Input("i", kI32, {3});
  const int in_j = b.Input("j", kI32, {3});
  b.Output(b.Div(in_i, in_j));
  const ir::Model model = b.Finish();
  const std::vector<npy::Array> inputs = {I32({3}, {1, 2, 3}), I32({3}, {1, 0, 1})};
  ExpectInvokeFails(model, inputs, "division by 0");
  ExpectLiteRtFails(model, inputs);
}

}  // namespace
}  // namespace gpuclean::testing::ewt
