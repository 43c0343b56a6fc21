// ctest-labels: litert
// LOGICAL_NOT against LiteRT.js (bools made in the graph, returned as int32
// through CAST) over shapes from scalar to rank 5 and a large tensor. On
// ours: bool in and bool out.
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

TEST(LogicalNot, MatchesLiteRt) {
  CaseGraph g;
  g.AddUnary([](GraphBuilder& b, int x) { return BoolOut(b, b.LogicalNot(PositiveMask(b, x))); }, -1.0f, 1.0f, 4400);
  g.ExpectMatches();
}

TEST(LogicalNot, BoolOnOurs) {
  GraphBuilder b;
  b.Output(b.LogicalNot(PositiveMask(b, b.Input("x", kF32, {3}))));
  const auto out = RunOurs(b.Finish(), {F32({3}, {1, -1, NAN})});
  ASSERT_EQ(out[0].dtype, kBool);
  EXPECT_EQ(ValuesOf<uint8_t>(out[0]), (std::vector<uint8_t>{0, 1, 1}));
}

}  // namespace
}  // namespace gpuclean::testing::ewt
