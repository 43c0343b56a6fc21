// COS against LiteRT.js: float32 over shapes from scalar to rank 5 and a
// large tensor (parallel chunks), inputs in [-10, 10); special values
// (large arguments, inf = NaN).
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

int Op(GraphBuilder& b, int x) { return b.Cos(x); }

TEST(Cos, Float32Shapes) { ExpectUnaryMatches(Op, -10.0f, 10.0f, 2100); }

TEST(Cos, SpecialValues) {
  GraphBuilder b;
  const std::vector<float> values = {0.0f, -0.0f, 1.0f, -1.0f, 3.14159265f, 1e4f, -1e4f, 1e-30f, INFINITY, -INFINITY, NAN};
  const int32_t n = static_cast<int32_t>(values.size());
  b.Output(Op(b, b.Input("x", kF32, {n})));
  ExpectMatchesLiteRt(b.Finish(), {F32({n}, values)});
}

TEST(Cos, RejectsNonFloat) {
  GraphBuilder b;
  b.Output(Op(b, b.Input("x", kI32, {3})));
  ExpectRejected(b.Finish());
}

}  // namespace
}  // namespace gpuclean::testing::ewt
