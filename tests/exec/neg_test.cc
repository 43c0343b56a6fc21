// NEG against LiteRT.js: float32 over shapes from scalar to rank 5 and a
// large tensor, special values; int32 and int64 (inside the graph); -INT_MIN
// wraps to INT_MIN on ours.
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

int Op(GraphBuilder& b, int x) { return b.Neg(x); }

TEST(Neg, Float32Shapes) { ExpectUnaryMatches(Op, -10.0f, 10.0f, 3400); }

TEST(Neg, SpecialValuesAndIntegers) {
  GraphBuilder b;
  const std::vector<float> values = {0.0f, -0.0f, 1.0f, -1.0f, 1e-40f, -1e30f, INFINITY, -INFINITY, NAN};
  const int32_t n = static_cast<int32_t>(values.size());
  b.Output(Op(b, b.Input("x", kF32, {n})));
  const int i = b.Input("i", kI32, {3, 7});
  b.Output(Op(b, i));
  b.Output(b.Cast(Op(b, b.Cast(i, kI64)), kI32));
  ExpectMatchesLiteRt(b.Finish(), {F32({n}, values), RandomI32({3, 7}, 3401, -2147483647, 2147483647)});
}

TEST(Neg, Int32MinWraps) {
  GraphBuilder b;
  b.Output(Op(b, b.Input("i", kI32, {3})));
  const auto out = RunOurs(b.Finish(), {I32({3}, {-2147483647 - 1, -3, 0})});
  EXPECT_EQ(ValuesOf<int32_t>(out[0]), (std::vector<int32_t>{-2147483647 - 1, 3, 0}));
}

}  // namespace
}  // namespace gpuclean::testing::ewt
