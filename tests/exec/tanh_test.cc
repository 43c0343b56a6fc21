// TANH against LiteRT.js: float32 over shapes from scalar to rank 5 and a
// large tensor (parallel chunks), inputs in [-6, 6); special values
// (saturation, ±inf, NaN).
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

int Op(GraphBuilder& b, int x) { return b.Tanh(x); }

TEST(Tanh, Float32Shapes) { ExpectUnaryMatches(Op, -6.0f, 6.0f, 2400); }

TEST(Tanh, SpecialValues) {
  GraphBuilder b;
  const std::vector<float> values = {0.0f, -0.0f, 1e-8f, 0.5f, -0.5f, 9.0f, -9.0f, 50.0f, -50.0f, INFINITY, -INFINITY, NAN};
  const int32_t n = static_cast<int32_t>(values.size());
  b.Output(Op(b, b.Input("x", kF32, {n})));
  ExpectMatchesLiteRt(b.Finish(), {F32({n}, values)});
}

TEST(Tanh, RejectsNonFloat) {
  GraphBuilder b;
  b.Output(Op(b, b.Input("x", kI32, {3})));
  ExpectRejected(b.Finish());
}

}  // namespace
}  // namespace gpuclean::testing::ewt
