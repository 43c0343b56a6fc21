// ctest-labels: litert
// SQRT against LiteRT.js, all cases in one graph: float32 over shapes from
// scalar to rank 5 and a large tensor (parallel chunks), inputs in
// [0.0, 100.0), and special values (±0, negative = NaN, inf, NaN).
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

int OpSqrt(GraphBuilder& b, int x) { return b.Sqrt(x); }

TEST(Sqrt, MatchesLiteRt) {
  CaseGraph g;
  g.AddUnary(OpSqrt, 0.0f, 100.0f, 1700);
  g.AddValues(OpSqrt, {0.0f, -0.0f, 1.0f, 4.0f, 2.0f, 1e-30f, 1e30f, -1.0f, INFINITY, -INFINITY, NAN});
  g.ExpectMatches();
}

TEST(Sqrt, RejectsNonFloat) {
  GraphBuilder b;
  b.Output(OpSqrt(b, b.Input("x", kI32, {3})));
  ExpectInterpreterRefuses(b.Finish());
}

}  // namespace
}  // namespace gpuclean::testing::ewt
