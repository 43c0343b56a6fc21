// ctest-labels: litert
// RELU6 against LiteRT.js, all cases in one graph: float32 over shapes from
// scalar to rank 5 and a large tensor (parallel chunks), inputs in
// [-8.0, 8.0), and special values (the bounds, ±inf, NaN passes through).
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

int OpRelu6(GraphBuilder& b, int x) { return b.Relu6(x); }

TEST(Relu6, MatchesLiteRt) {
  CaseGraph g;
  g.AddUnary(OpRelu6, -8.0f, 8.0f, 2700);
  g.AddValues(OpRelu6, {0.0f, -0.0f, 6.0f, 6.5f, -1.0f, 5.99f, 1e30f, INFINITY, -INFINITY, NAN});
  g.ExpectMatches();
}

TEST(Relu6, RejectsNonFloat) {
  GraphBuilder b;
  b.Output(OpRelu6(b, b.Input("x", kI32, {3})));
  ExpectInterpreterRefuses(b.Finish());
}

}  // namespace
}  // namespace gpuclean::testing::ewt
