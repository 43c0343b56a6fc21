// ctest-labels: litert
// ROUND against LiteRT.js, all cases in one graph: float32 over shapes from
// scalar to rank 5 and a large tensor, inputs in [-20, 20), ties (half to
// even: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, -2.5 -> -2) and special values.
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

int OpRound(GraphBuilder& b, int x) { return b.Round(x); }

TEST(Round, MatchesLiteRt) {
  CaseGraph g;
  g.AddUnary(OpRound, -20.0f, 20.0f, 2100);
  g.AddValues(OpRound, {0.5f, 1.5f, 2.5f, 3.5f, -0.5f, -1.5f, -2.5f, 0.49999997f, 2.5000002f, 0.0f, -0.0f, 8388607.5f,
                        16777216.0f, -1e30f, 1e30f, INFINITY, -INFINITY, NAN});
  g.ExpectMatches();
}

TEST(Round, TiesGoToEven) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {4});
  b.Output(OpRound(b, x));
  exec::Interpreter interp(std::make_shared<const ir::Model>(b.Finish()));
  interp.SetInput(0, F32({4}, {0.5f, 1.5f, 2.5f, -2.5f}));
  interp.Invoke();
  const npy::Array out = interp.Output(0);
  EXPECT_EQ(std::vector<float>(out.as<float>(), out.as<float>() + 4), (std::vector<float>{0.0f, 2.0f, 2.0f, -2.0f}));
}

// The sign of a zero result: LiteRT's floor form gives +0 from a non-zero x
// and keeps -0 itself.
TEST(Round, ZeroResultsTakeLiteRtsSign) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {4});
  b.Output(OpRound(b, x));
  exec::Interpreter interp(std::make_shared<const ir::Model>(b.Finish()));
  interp.SetInput(0, F32({4}, {-0.3f, -0.5f, -0.0f, 0.0f}));
  interp.Invoke();
  const npy::Array out = interp.Output(0);
  EXPECT_FALSE(std::signbit(out.as<float>()[0]));
  EXPECT_FALSE(std::signbit(out.as<float>()[1]));
  EXPECT_TRUE(std::signbit(out.as<float>()[2]));
  EXPECT_FALSE(std::signbit(out.as<float>()[3]));
}

TEST(Round, RejectsNonFloat) {
  GraphBuilder b;
  b.Output(OpRound(b, b.Input("x", kI32, {3})));
  ExpectInterpreterRefuses(b.Finish());
}

}  // namespace
}  // namespace gpuclean::testing::ewt
