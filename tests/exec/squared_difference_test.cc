// SQUARED_DIFFERENCE against LiteRT.js: float32 over every broadcasting
// pattern up to rank 6, int32 with broadcasting; int32 wrap-around on ours.
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

int SqDiff(GraphBuilder& b, int x, int y) { return b.SquaredDifference(x, y); }

TEST(SquaredDifference, Float32Broadcasting) {
  auto pairs = BroadcastPairs();
  for (const auto& p : HighRankPairs()) pairs.push_back(p);
  ExpectBinaryMatches(pairs, kF32, SqDiff, Uniform(-10, 10), Uniform(-10, 10), 700);
}

TEST(SquaredDifference, Int32Broadcasting) {
  ExpectBinaryMatches(BroadcastPairs(), kI32, SqDiff, Ints(-20000, 20000), Ints(-20000, 20000), 800);
}

TEST(SquaredDifference, Int32WrapsAndFloatSpecials) {
  GraphBuilder b;
  const int i = b.Input("i", kI32, {3});
  const int j = b.Input("j", kI32, {3});
  const int x = b.Input("x", kF32, {3});
  const int y = b.Input("y", kF32, {3});
  b.Output(b.SquaredDifference(i, j));
  b.Output(b.SquaredDifference(x, y));
  const auto out = RunOurs(b.Finish(), {I32({3}, {65536, 3, -4}), I32({3}, {0, 3, 4}),
                                        F32({3}, {INFINITY, 1e20f, -0.0f}), F32({3}, {INFINITY, -1e20f, 0.0f})});
  EXPECT_EQ(ValuesOf<int32_t>(out[0]), (std::vector<int32_t>{0, 0, 64}));
  ExpectSameFloats(ValuesOf<float>(out[1]), {NAN, INFINITY, 0.0f});
}

}  // namespace
}  // namespace gpuclean::testing::ewt
