// ctest-labels: litert
// TANH against LiteRT.js, all cases in one graph: float32 over shapes from
// scalar to rank 5 and a large tensor (parallel chunks), inputs in
// [-6.0, 6.0), and special values (saturation, ±inf, NaN).
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

int OpTanh(GraphBuilder& b, int x) { return b.Tanh(x); }

TEST(Tanh, MatchesLiteRt) {
  CaseGraph g;
  g.AddUnary(OpTanh, -6.0f, 6.0f, 2400);
  g.AddValues(OpTanh, {0.0f, -0.0f, 1e-8f, 0.5f, -0.5f, 9.0f, -9.0f, 50.0f, -50.0f, INFINITY, -INFINITY, NAN});
  g.ExpectMatches();
}

TEST(Tanh, RejectsNonFloat) {
  GraphBuilder b;
  b.Output(OpTanh(b, b.Input("x", kI32, {3})));
  ExpectInterpreterRefuses(b.Finish());
}

}  // namespace
}  // namespace gpuclean::testing::ewt
