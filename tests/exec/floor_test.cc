// ctest-labels: litert
// FLOOR against LiteRT.js, all cases in one graph: float32 over shapes from
// scalar to rank 5 and a large tensor (parallel chunks), inputs in
// [-5.0, 5.0), and special values (halves, integers, huge values, ±inf, NaN).
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

int OpFloor(GraphBuilder& b, int x) { return b.Floor(x); }

TEST(Floor, MatchesLiteRt) {
  CaseGraph g;
  g.AddUnary(OpFloor, -5.0f, 5.0f, 2200);
  g.AddValues(OpFloor,
              {0.0f, -0.0f, 0.5f, -0.5f, 2.5f, -2.5f, 1.0f, -1.0f, 8388609.0f, 1e30f, INFINITY, -INFINITY, NAN});
  g.ExpectMatches();
}

TEST(Floor, RejectsNonFloat) {
  GraphBuilder b;
  b.Output(OpFloor(b, b.Input("x", kI32, {3})));
  ExpectInterpreterRefuses(b.Finish());
}

}  // namespace
}  // namespace gpuclean::testing::ewt
