// ctest-labels: litert
// SIGN against LiteRT.js, all cases in one graph: float32 over shapes from
// scalar to rank 5 and a large tensor, special values (±0, ±inf, NaN,
// denormals), int32 with zeros and both extremes. On ours: int16 is refused.
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

int OpSign(GraphBuilder& b, int x) { return b.Unary(tfl::BuiltinOperator_SIGN, x); }

TEST(Sign, MatchesLiteRt) {
  CaseGraph g;
  g.AddUnary(OpSign, -2.0f, 2.0f, 3400);
  g.AddValues(OpSign, {0.0f, -0.0f, 1.0f, -1.0f, 1e-40f, -1e-40f, 1e30f, -1e30f, INFINITY, -INFINITY, NAN});
  g.Output(OpSign(g.b(), g.Input(RandomI32({3, 7}, 3401, -3, 3))));
  g.Output(OpSign(g.b(), g.Input(I32({4}, {0, -2147483647 - 1, 2147483647, -7}))));
  g.ExpectMatches();
}

TEST(Sign, Values) {
  GraphBuilder b;
  b.Output(OpSign(b, b.Input("x", kF32, {5})));
  const auto out = RunOurs(b.Finish(), {F32({5}, {-3.5f, -0.0f, 0.0f, 2e-38f, NAN})});
  const std::vector<float> got = ValuesOf<float>(out[0]);
  EXPECT_EQ(got[0], -1.0f);
  EXPECT_EQ(got[1], 0.0f);
  EXPECT_EQ(got[2], 0.0f);
  EXPECT_EQ(got[3], 1.0f);
  EXPECT_TRUE(std::isnan(got[4]));
}

TEST(Sign, RejectsInt16) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {3});
  b.Output(b.Cast(OpSign(b, b.Cast(x, tfl::TensorType_INT16)), kF32));
  ExpectInterpreterRefuses(b.Finish());
}

}  // namespace
}  // namespace gpuclean::testing::ewt
