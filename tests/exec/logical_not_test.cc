// LOGICAL_NOT against LiteRT.js (bools made in the graph, returned as int32
// through CAST) over several shapes; bool in and bool out on ours.
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

TEST(LogicalNot, Shapes) {
  ExpectUnaryMatches([](GraphBuilder& b, int x) { return BoolOut(b, b.LogicalNot(PositiveMask(b, x))); }, -1.0f,
                     1.0f, 4400);
}

TEST(LogicalNot, BoolOnOurs) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {3});
  b.Output(b.LogicalNot(PositiveMask(b, x)));
  const auto out = RunOurs(b.Finish(), {F32({3}, {1, -1, NAN})});
  ASSERT_EQ(out[0].dtype, kBool);
  EXPECT_EQ(ValuesOf<uint8_t>(out[0]), (std::vector<uint8_t>{0, 1, 1}));
}

}  // namespace
}  // namespace gpuclean::testing::ewt
