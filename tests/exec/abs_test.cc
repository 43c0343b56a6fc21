// ABS against LiteRT.js: float32 over shapes from scalar to rank 5 and a
// large tensor, special values (-0, ±inf, NaN); int32 (|INT_MIN| wraps to
// INT_MIN on ours).
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

int Op(GraphBuilder& b, int x) { return b.Abs(x); }

TEST(Abs, Float32Shapes) { ExpectUnaryMatches(Op, -10.0f, 10.0f, 3300); }

TEST(Abs, SpecialValuesAndInt32) {
  GraphBuilder b;
  const std::vector<float> values = {0.0f, -0.0f, 1.0f, -1.0f, 1e-40f, -1e30f, INFINITY, -INFINITY, NAN};
  const int32_t n = static_cast<int32_t>(values.size());
  b.Output(Op(b, b.Input("x", kF32, {n})));
  b.Output(Op(b, b.Input("i", kI32, {3, 7})));
  b.Output(Op(b, b.Input("s", kI32, {})));
  ExpectMatchesLiteRt(b.Finish(),
                      {F32({n}, values), RandomI32({3, 7}, 3301, -2147483647, 2147483647), I32({}, {-5})});
}

TEST(Abs, Int32MinWraps) {
  GraphBuilder b;
  b.Output(Op(b, b.Input("i", kI32, {3})));
  const auto out = RunOurs(b.Finish(), {I32({3}, {-2147483647 - 1, -3, 3})});
  EXPECT_EQ(ValuesOf<int32_t>(out[0]), (std::vector<int32_t>{-2147483647 - 1, 3, 3}));
}

TEST(Abs, RejectsInt16) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {3});
  b.Output(b.Cast(Op(b, b.Cast(x, tfl::TensorType_INT16)), kF32));
  ExpectRejected(b.Finish());
}

}  // namespace
}  // namespace gpuclean::testing::ewt
