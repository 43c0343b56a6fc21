// ctest-labels: litert
// NEG against LiteRT.js, all cases in one graph: float32 over shapes from
// scalar to rank 5 and a large tensor, special values, int32, int64 (inside
// the graph). On ours: -INT_MIN wraps to INT_MIN.
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

int OpNeg(GraphBuilder& b, int x) { return b.Neg(x); }

TEST(Neg, MatchesLiteRt) {
  CaseGraph g;
  g.AddUnary(OpNeg, -10.0f, 10.0f, 3400);
  g.AddValues(OpNeg, {0.0f, -0.0f, 1.0f, -1.0f, 1e-40f, -1e30f, INFINITY, -INFINITY, NAN});
  const int i = g.Input(RandomI32({3, 7}, 3401, -2147483647, 2147483647));
  g.Output(OpNeg(g.b(), i));
  g.Output(g.b().Cast(OpNeg(g.b(), g.b().Cast(i, kI64)), kI32));
  g.ExpectMatches();
}

TEST(Neg, Int32MinWraps) {
  GraphBuilder b;
  b.Output(OpNeg(b, b.Input("i", kI32, {3})));
  const auto out = RunOurs(b.Finish(), {I32({3}, {-2147483647 - 1, -3, 0})});
  EXPECT_EQ(ValuesOf<int32_t>(out[0]), (std::vector<int32_t>{-2147483647 - 1, 3, 0}));
}

}  // namespace
}  // namespace gpuclean::testing::ewt
