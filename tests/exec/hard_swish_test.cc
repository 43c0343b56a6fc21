// ctest-labels: litert
// HARD_SWISH against LiteRT.js, all cases in one graph: float32 over shapes from
// scalar to rank 5 and a large tensor (parallel chunks), inputs in
// [-6.0, 6.0), and special values (the kinks at ±3, ±inf where -inf * 0 = NaN, NaN).
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

int OpHardSwish(GraphBuilder& b, int x) { return b.HardSwish(x); }

TEST(HardSwish, MatchesLiteRt) {
  CaseGraph g;
  g.AddUnary(OpHardSwish, -6.0f, 6.0f, 3100);
  g.AddValues(OpHardSwish, {0.0f, -0.0f, 3.0f, -3.0f, 2.9f, -2.9f, 6.0f, 100.0f, -100.0f, INFINITY, -INFINITY, NAN});
  g.ExpectMatches();
}

TEST(HardSwish, RejectsNonFloat) {
  GraphBuilder b;
  b.Output(OpHardSwish(b, b.Input("x", kI32, {3})));
  ExpectInterpreterRefuses(b.Finish());
}

}  // namespace
}  // namespace gpuclean::testing::ewt
