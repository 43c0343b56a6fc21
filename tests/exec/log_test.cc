// ctest-labels: litert
// LOG against LiteRT.js, all cases in one graph: float32 over shapes from
// scalar to rank 5 and a large tensor, inputs in [0.001, 100), and special
// values log(±0) = -inf, log(x < 0) = NaN, log(-inf) = NaN.
// Where LiteRT.js (XNNPACK's polynomial log) is not IEEE we keep IEEE, and a
// hand-computed test pins it: it answers ~88.38 for log(inf), ~88.78 for
// log(NaN) and ~-88.36 for log(1e-40) (denormals), we inf, NaN and -92.1.
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

int OpLog(GraphBuilder& b, int x) { return b.Log(x); }

TEST(Log, MatchesLiteRt) {
  CaseGraph g;
  g.AddUnary(OpLog, 0.001f, 100.0f, 3200);
  g.AddValues(OpLog, {0.0f, -0.0f, 1.0f, -1.0f, 1e-30f, 1e30f, 2.0f, -INFINITY});
  g.ExpectMatches();
}

TEST(Log, IeeeWhereLiteRtJsIsNot) {
  const std::vector<float> got = RunUnaryOurs(OpLog, {INFINITY, NAN, 1e-40f, 1.0f});
  EXPECT_EQ(got[0], INFINITY);
  EXPECT_TRUE(std::isnan(got[1]));
  EXPECT_NEAR(got[2], std::log(1e-40), 1e-4);
  EXPECT_EQ(got[3], 0.0f);
}

TEST(Log, RejectsNonFloat) {
  GraphBuilder b;
  b.Output(OpLog(b, b.Input("x", kI32, {3})));
  ExpectInterpreterRefuses(b.Finish());
}

}  // namespace
}  // namespace gpuclean::testing::ewt
