// EQUAL against LiteRT.js, all cases in one graph (bool outputs returned as
// int32 through CAST, as LiteRT.js cannot return bools): float32 with many
// exact ties over broadcasting up to rank 6, int32, NaN, ±inf and signed
// zeros, int64 (made in the graph), bool inputs (made in the graph). On ours: the bool output.
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

int OpEqual(GraphBuilder& b, int x, int y) { return BoolOut(b, b.Equal(x, y)); }

TEST(Equal, MatchesLiteRt) {
  CaseGraph g;
  GraphBuilder& b = g.b();
  g.AddBinary(BroadcastPairs(), OpEqual, Tied(-2, 2), Tied(-2, 2), 4000);
  g.AddBinary(BroadcastPairs(), OpEqual, Ints(-2, 2), Ints(-2, 2), 4100);
  const float inf = INFINITY;
  g.Output(OpEqual(b, g.Input(F32({7}, {NAN, 1.0f, NAN, -0.0f, inf, -inf, 2.0f})),
              g.Input(F32({7}, {1.0f, NAN, NAN, 0.0f, inf, inf, 2.0f}))));
  const int i = g.Input(RandomI32({3, 4}, 4200, -2, 2));
  const int j = g.Input(RandomI32({4}, 4201, -2, 2));
  g.Output(OpEqual(b, b.Cast(i, kI64), b.Cast(j, kI64)));
  const int bx = g.Input(RandomF32({4, 5}, 4202, -1, 1));
  const int by = g.Input(RandomF32({5}, 4203, -1, 1));
  g.Output(BoolOut(b, b.Equal(PositiveMask(b, bx), PositiveMask(b, by))));
  g.Output(BoolOut(b, b.Equal(PositiveMask(b, bx), PositiveMask(b, bx))));
  g.ExpectMatches();
}

TEST(Equal, BoolOutputOnOurs) {
  GraphBuilder b;
  const int in_x = b.Input("x", kF32, {4});
  const int in_y = b.Input("y", kF32, {4});
  b.Output(b.Equal(in_x, in_y));
  const auto out = RunOurs(b.Finish(), {F32({4}, {1, 2, 3, NAN}), F32({4}, {2, 2, 2, 2})});
  ASSERT_EQ(out[0].dtype, kBool);
  const std::vector<float> a = {1, 2, 3, NAN};
  std::vector<uint8_t> want;
  for (float v : a) want.push_back(v == 2.0f ? 1 : 0);
  EXPECT_EQ(ValuesOf<uint8_t>(out[0]), want);
}

}  // namespace
}  // namespace gpuclean::testing::ewt
