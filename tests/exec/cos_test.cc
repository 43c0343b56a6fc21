// ctest-labels: litert
// COS against LiteRT.js, all cases in one graph: float32 over shapes from
// scalar to rank 5 and a large tensor (parallel chunks), inputs in
// [-10.0, 10.0), and special values (large arguments, cos(inf) = NaN).
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

int OpCos(GraphBuilder& b, int x) { return b.Cos(x); }

TEST(Cos, MatchesLiteRt) {
  CaseGraph g;
  g.AddUnary(OpCos, -10.0f, 10.0f, 2100);
  g.AddValues(OpCos, {0.0f, -0.0f, 1.0f, -1.0f, 3.14159265f, 1e4f, -1e4f, 1e-30f, INFINITY, -INFINITY, NAN});
  g.ExpectMatches();
}

TEST(Cos, RejectsNonFloat) {
  GraphBuilder b;
  b.Output(OpCos(b, b.Input("x", kI32, {3})));
  ExpectInterpreterRefuses(b.Finish());
}

}  // namespace
}  // namespace gpuclean::testing::ewt
