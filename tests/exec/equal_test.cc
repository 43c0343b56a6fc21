// EQUAL against LiteRT.js (bool outputs returned as int32 through CAST):
// float32 with many exact ties over broadcasting up to rank 4, NaN and
// signed zeros, int32, int64 (made in the graph), bool inputs
// (made in the graph); the bool output
// read directly on ours.
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

int Op(GraphBuilder& b, int x, int y) { return BoolOut(b, b.Equal(x, y)); }

TEST(Equal, Float32Broadcasting) { ExpectBinaryMatches(BroadcastPairs(), kF32, Op, Tied(-2, 2), Tied(-2, 2), 4000); }

TEST(Equal, Int32Broadcasting) { ExpectBinaryMatches(BroadcastPairs(), kI32, Op, Ints(-2, 2), Ints(-2, 2), 4100); }

TEST(Equal, SpecialValuesAndInt64) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {7});
  const int y = b.Input("y", kF32, {7});
  const int i = b.Input("i", kI32, {3, 4});
  const int j = b.Input("j", kI32, {4});
  b.Output(Op(b, x, y));
  b.Output(Op(b, b.Cast(i, kI64), b.Cast(j, kI64)));
  const float inf = INFINITY;
  ExpectMatchesLiteRt(b.Finish(), {F32({7}, {NAN, 1.0f, NAN, -0.0f, inf, -inf, 2.0f}),
                                   F32({7}, {1.0f, NAN, NAN, 0.0f, inf, inf, 2.0f}),
                                   RandomI32({3, 4}, 4200, -2, 2), RandomI32({4}, 4201, -2, 2)});
}

TEST(Equal, BoolInputs) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {4, 5});
  const int y = b.Input("y", kF32, {5});
  b.Output(BoolOut(b, b.Equal(PositiveMask(b, x), PositiveMask(b, y))));
  b.Output(BoolOut(b, b.Equal(PositiveMask(b, x), PositiveMask(b, x))));
  ExpectMatchesLiteRt(b.Finish(), {RandomF32({4, 5}, 1, -1, 1), RandomF32({5}, 2, -1, 1)});
}

TEST(Equal, BoolOutputOnOurs) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {4});
  const int y = b.Input("y", kF32, {4});
  b.Output(b.Equal(x, y));
  const auto out = RunOurs(b.Finish(), {F32({4}, {1, 2, 3, NAN}), F32({4}, {2, 2, 2, 2})});
  ASSERT_EQ(out[0].dtype, kBool);
  const std::vector<float> a = {1, 2, 3, NAN};
  std::vector<uint8_t> want;
  for (float v : a) want.push_back(v == 2.0f ? 1 : 0);
  EXPECT_EQ(ValuesOf<uint8_t>(out[0]), want);
}

}  // namespace
}  // namespace gpuclean::testing::ewt
