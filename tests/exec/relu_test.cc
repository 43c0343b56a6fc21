// RELU against LiteRT.js: float32 over shapes from scalar to rank 5 and a
// large tensor (parallel chunks), inputs in [-8, 8); special values
// (±0, ±inf, NaN passes through).
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

int Op(GraphBuilder& b, int x) { return b.Relu(x); }

TEST(Relu, Float32Shapes) { ExpectUnaryMatches(Op, -8.0f, 8.0f, 2600); }

TEST(Relu, SpecialValues) {
  GraphBuilder b;
  const std::vector<float> values = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, -2.5f, 1e-30f, 1e30f, -1e30f, INFINITY, -INFINITY, NAN};
  const int32_t n = static_cast<int32_t>(values.size());
  b.Output(Op(b, b.Input("x", kF32, {n})));
  ExpectMatchesLiteRt(b.Finish(), {F32({n}, values)});
}

TEST(Relu, RejectsNonFloat) {
  GraphBuilder b;
  b.Output(Op(b, b.Input("x", kI32, {3})));
  ExpectRejected(b.Finish());
}

}  // namespace
}  // namespace gpuclean::testing::ewt
