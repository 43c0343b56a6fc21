// ctest-labels: litert
// EXP against LiteRT.js, all cases in one graph: float32 over shapes from
// scalar to rank 5 and a large tensor (parallel chunks), inputs in
// [-10.0, 10.0), and special values (overflow to inf, underflow to 0, ±inf, NaN).
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

int OpExp(GraphBuilder& b, int x) { return b.Exp(x); }

TEST(Exp, MatchesLiteRt) {
  CaseGraph g;
  g.AddUnary(OpExp, -10.0f, 10.0f, 1600);
  g.AddValues(OpExp, {0.0f, -0.0f, 1.0f, -1.0f, 88.0f, 89.0f, -87.0f, -104.0f, -110.0f, INFINITY, -INFINITY, NAN});
  g.ExpectMatches();
}

TEST(Exp, RejectsNonFloat) {
  GraphBuilder b;
  b.Output(OpExp(b, b.Input("x", kI32, {3})));
  ExpectInterpreterRefuses(b.Finish());
}

}  // namespace
}  // namespace gpuclean::testing::ewt
