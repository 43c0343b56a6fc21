// ctest-labels: litert
// SQUARE against LiteRT.js, all cases in one graph: float32 over shapes from
// scalar to rank 5 and a large tensor (parallel chunks), inputs in
// [-10.0, 10.0), and special values (overflow to inf, NaN).
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

int OpSquare(GraphBuilder& b, int x) { return b.Square(x); }

TEST(Square, MatchesLiteRt) {
  CaseGraph g;
  g.AddUnary(OpSquare, -10.0f, 10.0f, 1900);
  g.AddValues(OpSquare, {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, -2.5f, 1e-30f, 1e30f, -1e30f, INFINITY, -INFINITY, NAN});
  g.ExpectMatches();
}

TEST(Square, RejectsNonFloat) {
  GraphBuilder b;
  b.Output(OpSquare(b, b.Input("x", kI32, {3})));
  ExpectInterpreterRefuses(b.Finish());
}

}  // namespace
}  // namespace gpuclean::testing::ewt
