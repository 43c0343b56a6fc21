// ctest-labels: litert
// SIN against LiteRT.js, all cases in one graph: float32 over shapes from
// scalar to rank 5 and a large tensor (parallel chunks), inputs in
// [-10.0, 10.0), and special values (large arguments, sin(inf) = NaN).
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

int OpSin(GraphBuilder& b, int x) { return b.Sin(x); }

TEST(Sin, MatchesLiteRt) {
  CaseGraph g;
  g.AddUnary(OpSin, -10.0f, 10.0f, 2000);
  g.AddValues(OpSin, {0.0f, -0.0f, 1.0f, -1.0f, 3.14159265f, 1e4f, -1e4f, 1e-30f, INFINITY, -INFINITY, NAN});
  g.ExpectMatches();
}

TEST(Sin, RejectsNonFloat) {
  GraphBuilder b;
  b.Output(OpSin(b, b.Input("x", kI32, {3})));
  ExpectInterpreterRefuses(b.Finish());
}

}  // namespace
}  // namespace gpuclean::testing::ewt
