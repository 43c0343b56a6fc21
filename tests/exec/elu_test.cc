// ctest-labels: litert
// ELU against LiteRT.js, all cases in one graph: float32 over shapes from
// scalar to rank 5 and a large tensor (parallel chunks), inputs in
// [-6.0, 6.0), and special values (tiny negatives where e^x - 1 needs expm1, ±inf, NaN).
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

int OpElu(GraphBuilder& b, int x) { return b.Elu(x); }

TEST(Elu, MatchesLiteRt) {
  CaseGraph g;
  g.AddUnary(OpElu, -6.0f, 6.0f, 3000);
  g.AddValues(OpElu, {0.0f, -0.0f, 1e-7f, -1e-7f, 1.0f, -1.0f, -20.0f, -100.0f, 1e30f, INFINITY, -INFINITY, NAN});
  g.ExpectMatches();
}

TEST(Elu, RejectsNonFloat) {
  GraphBuilder b;
  b.Output(OpElu(b, b.Input("x", kI32, {3})));
  ExpectInterpreterRefuses(b.Finish());
}

}  // namespace
}  // namespace gpuclean::testing::ewt
