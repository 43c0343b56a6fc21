// ctest-labels: litert
// LOGICAL_AND against LiteRT.js, all cases in one graph (bools made in the graph
// with comparisons, returned as int32 through CAST) over broadcasting up to
// rank 6. On ours: the truth table, bool in and bool out.
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

int OpLogicalAnd(GraphBuilder& b, int x, int y) {
  return BoolOut(b, b.LogicalAnd(PositiveMask(b, x), PositiveMask(b, y)));
}

TEST(LogicalAnd, MatchesLiteRt) {
  CaseGraph g;
  g.AddBinary(BroadcastPairs(), OpLogicalAnd, Uniform(-1, 1), Uniform(-1, 1), 4300);
  g.ExpectMatches();
}

TEST(LogicalAnd, TruthTable) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {4});
  const int y = b.Input("y", kF32, {4});
  b.Output(b.LogicalAnd(PositiveMask(b, x), PositiveMask(b, y)));
  const auto out = RunOurs(b.Finish(), {F32({4}, {0, 0, 1, 1}), F32({4}, {0, 1, 0, 1})});
  ASSERT_EQ(out[0].dtype, kBool);
  std::vector<uint8_t> want;
  for (int k = 0; k < 4; ++k) want.push_back(((k & 2) != 0) && ((k & 1) != 0) ? 1 : 0);
  EXPECT_EQ(ValuesOf<uint8_t>(out[0]), want);
}

}  // namespace
}  // namespace gpuclean::testing::ewt
