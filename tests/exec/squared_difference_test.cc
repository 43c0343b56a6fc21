// ctest-labels: litert
// SQUARED_DIFFERENCE against LiteRT.js, all cases in one graph: float32 over
// every broadcasting pattern up to rank 6 and special values, int32 with
// broadcasting. On ours: int32 wrap-around.
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

int OpSquaredDifference(GraphBuilder& b, int x, int y) { return b.SquaredDifference(x, y); }

TEST(SquaredDifference, MatchesLiteRt) {
  CaseGraph g;
  g.AddBinary(BroadcastPairs(), OpSquaredDifference, Uniform(-10, 10), Uniform(-10, 10), 700);
  g.AddBinary(BroadcastPairs(), OpSquaredDifference, Ints(-20000, 20000), Ints(-20000, 20000), 800);
  g.Output(OpSquaredDifference(g.b(), g.Input(F32({4}, {INFINITY, 1e20f, -0.0f, NAN})),
                               g.Input(F32({4}, {INFINITY, -1e20f, 0.0f, 1.0f}))));
  g.ExpectMatches();
}

TEST(SquaredDifference, Int32WrapsAndFloatSpecials) {
  GraphBuilder b;
  const int in_i = b.Input("i", kI32, {3});
  const int in_j = b.Input("j", kI32, {3});
  b.Output(OpSquaredDifference(b, in_i, in_j));
  const int in_x = b.Input("x", kF32, {3});
  const int in_y = b.Input("y", kF32, {3});
  b.Output(OpSquaredDifference(b, in_x, in_y));
  const auto out = RunOurs(b.Finish(), {I32({3}, {65536, 3, -4}), I32({3}, {0, 3, 4}),
                                        F32({3}, {INFINITY, 1e20f, -0.0f}), F32({3}, {INFINITY, -1e20f, 0.0f})});
  EXPECT_EQ(ValuesOf<int32_t>(out[0]), (std::vector<int32_t>{0, 0, 64}));
  ExpectFloatsNear(ValuesOf<float>(out[1]), {NAN, INFINITY, 0.0f});
}

}  // namespace
}  // namespace gpuclean::testing::ewt
