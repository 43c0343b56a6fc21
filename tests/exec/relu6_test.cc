// RELU6 against LiteRT.js: float32 over shapes from scalar to rank 5 and a
// large tensor (parallel chunks), inputs in [-8, 8); special values
// (the bounds, ±inf, NaN passes through).
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

int Op(GraphBuilder& b, int x) { return b.Relu6(x); }

TEST(Relu6, Float32Shapes) { ExpectUnaryMatches(Op, -8.0f, 8.0f, 2700); }

TEST(Relu6, SpecialValues) {
  GraphBuilder b;
  const std::vector<float> values = {0.0f, -0.0f, 6.0f, 6.5f, -1.0f, 5.99f, 1e30f, INFINITY, -INFINITY, NAN};
  const int32_t n = static_cast<int32_t>(values.size());
  b.Output(Op(b, b.Input("x", kF32, {n})));
  ExpectMatchesLiteRt(b.Finish(), {F32({n}, values)});
}

TEST(Relu6, RejectsNonFloat) {
  GraphBuilder b;
  b.Output(Op(b, b.Input("x", kI32, {3})));
  ExpectRejected(b.Finish());
}

}  // namespace
}  // namespace gpuclean::testing::ewt
