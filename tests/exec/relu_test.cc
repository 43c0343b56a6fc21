// ctest-labels: litert
// RELU against LiteRT.js, all cases in one graph: float32 over shapes from
// scalar to rank 5 and a large tensor (parallel chunks), inputs in
// [-8.0, 8.0), and special values (±0, ±inf, NaN passes through).
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

int OpRelu(GraphBuilder& b, int x) { return b.Relu(x); }

TEST(Relu, MatchesLiteRt) {
  CaseGraph g;
  g.AddUnary(OpRelu, -8.0f, 8.0f, 2600);
  g.AddValues(OpRelu, {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, -2.5f, 1e-30f, 1e30f, -1e30f, INFINITY, -INFINITY, NAN});
  g.ExpectMatches();
}

TEST(Relu, RejectsNonFloat) {
  GraphBuilder b;
  b.Output(OpRelu(b, b.Input("x", kI32, {3})));
  ExpectInterpreterRefuses(b.Finish());
}

}  // namespace
}  // namespace gpuclean::testing::ewt
