// ctest-labels: litert
// ABS against LiteRT.js, all cases in one graph: float32 over shapes from
// scalar to rank 5 and a large tensor, special values (-0, ±inf, NaN), int32.
// On ours: |INT_MIN| wraps to INT_MIN; int16 is refused.
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

int OpAbs(GraphBuilder& b, int x) { return b.Abs(x); }

TEST(Abs, MatchesLiteRt) {
  CaseGraph g;
  g.AddUnary(OpAbs, -10.0f, 10.0f, 3300);
  g.AddValues(OpAbs, {0.0f, -0.0f, 1.0f, -1.0f, 1e-40f, -1e30f, INFINITY, -INFINITY, NAN});
  g.Output(OpAbs(g.b(), g.Input(RandomI32({3, 7}, 3301, -2147483647, 2147483647))));
  g.Output(OpAbs(g.b(), g.Input(I32({}, {-5}))));
  g.ExpectMatches();
}

TEST(Abs, Int32MinWraps) {
  GraphBuilder b;
  b.Output(OpAbs(b, b.Input("i", kI32, {3})));
  const auto out = RunOurs(b.Finish(), {I32({3}, {-2147483647 - 1, -3, 3})});
  EXPECT_EQ(ValuesOf<int32_t>(out[0]), (std::vector<int32_t>{-2147483647 - 1, 3, 3}));
}

TEST(Abs, RejectsInt16) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {3});
  b.Output(b.Cast(OpAbs(b, b.Cast(x, tfl::TensorType_INT16)), kF32));
  ExpectInterpreterRefuses(b.Finish());
}

}  // namespace
}  // namespace gpuclean::testing::ewt
