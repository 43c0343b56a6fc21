// ctest-labels: litert
// LOGISTIC against LiteRT.js, all cases in one graph: float32 over shapes from
// scalar to rank 5 and a large tensor (parallel chunks), inputs in
// [-20.0, 20.0), and special values (saturation to 0 and 1, ±inf, NaN).
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

int OpLogistic(GraphBuilder& b, int x) { return b.Logistic(x); }

TEST(Logistic, MatchesLiteRt) {
  CaseGraph g;
  g.AddUnary(OpLogistic, -20.0f, 20.0f, 2500);
  g.AddValues(OpLogistic, {0.0f, -0.0f, 1.0f, -1.0f, 20.0f, -20.0f, 90.0f, -90.0f, -105.0f, INFINITY, -INFINITY, NAN});
  g.ExpectMatches();
}

TEST(Logistic, RejectsNonFloat) {
  GraphBuilder b;
  b.Output(OpLogistic(b, b.Input("x", kI32, {3})));
  ExpectInterpreterRefuses(b.Finish());
}

}  // namespace
}  // namespace gpuclean::testing::ewt
