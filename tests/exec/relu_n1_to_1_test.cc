// ctest-labels: litert
// RELU_N1_TO_1 against LiteRT.js, all cases in one graph: float32 over shapes from
// scalar to rank 5 and a large tensor (parallel chunks), inputs in
// [-3.0, 3.0), and special values (the bounds, ±inf, NaN passes through).
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

int OpReluN1To1(GraphBuilder& b, int x) { return b.ReluN1To1(x); }

TEST(ReluN1To1, MatchesLiteRt) {
  CaseGraph g;
  g.AddUnary(OpReluN1To1, -3.0f, 3.0f, 2800);
  g.AddValues(OpReluN1To1, {0.0f, -0.0f, 1.0f, -1.0f, 1.5f, -1.5f, 0.25f, INFINITY, -INFINITY, NAN});
  g.ExpectMatches();
}

TEST(ReluN1To1, RejectsNonFloat) {
  GraphBuilder b;
  b.Output(OpReluN1To1(b, b.Input("x", kI32, {3})));
  ExpectInterpreterRefuses(b.Finish());
}

}  // namespace
}  // namespace gpuclean::testing::ewt
