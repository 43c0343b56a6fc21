// RELU_0_TO_1 against LiteRT.js: float32 over shapes from scalar to rank 5 and a
// large tensor (parallel chunks), inputs in [-3, 3); special values
// (the bounds, ±inf, NaN passes through).
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

int Op(GraphBuilder& b, int x) { return b.Relu0To1(x); }

TEST(Relu0To1, Float32Shapes) { ExpectUnaryMatches(Op, -3.0f, 3.0f, 2900); }

TEST(Relu0To1, SpecialValues) {
  GraphBuilder b;
  const std::vector<float> values = {0.0f, -0.0f, 1.0f, -1.0f, 1.5f, -1.5f, 0.25f, INFINITY, -INFINITY, NAN};
  const int32_t n = static_cast<int32_t>(values.size());
  b.Output(Op(b, b.Input("x", kF32, {n})));
  ExpectMatchesLiteRt(b.Finish(), {F32({n}, values)});
}

TEST(Relu0To1, RejectsNonFloat) {
  GraphBuilder b;
  b.Output(Op(b, b.Input("x", kI32, {3})));
  ExpectRejected(b.Finish());
}

}  // namespace
}  // namespace gpuclean::testing::ewt
