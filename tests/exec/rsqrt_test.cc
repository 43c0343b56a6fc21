// ctest-labels: litert
// RSQRT against LiteRT.js, all cases in one graph: float32 over shapes from
// scalar to rank 5 and a large tensor (parallel chunks), inputs in
// [0.01, 100.0), and special values (rsqrt(±0) = ±inf, negative = NaN, inf, NaN).
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

int OpRsqrt(GraphBuilder& b, int x) { return b.Rsqrt(x); }

TEST(Rsqrt, MatchesLiteRt) {
  CaseGraph g;
  g.AddUnary(OpRsqrt, 0.01f, 100.0f, 1800);
  g.AddValues(OpRsqrt, {0.0f, -0.0f, 1.0f, 4.0f, 2.0f, 1e-30f, 1e30f, -1.0f, INFINITY, NAN});
  g.ExpectMatches();
}

TEST(Rsqrt, RejectsNonFloat) {
  GraphBuilder b;
  b.Output(OpRsqrt(b, b.Input("x", kI32, {3})));
  ExpectInterpreterRefuses(b.Finish());
}

}  // namespace
}  // namespace gpuclean::testing::ewt
