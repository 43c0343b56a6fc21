// LOG against LiteRT.js: float32 over shapes from scalar to rank 5 and a
// large tensor, inputs in [0.001, 100); special values log(±0) = -inf,
// log(x < 0) = NaN, log(-inf) = NaN. LiteRT.js (XNNPACK) answers ~88.38 for
// log(inf) and ~88.78 for log(NaN); we keep IEEE's inf and NaN there, which a
// hand-computed test pins down.
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

int Op(GraphBuilder& b, int x) { return b.Log(x); }

TEST(Log, Float32Shapes) { ExpectUnaryMatches(Op, 0.001f, 100.0f, 3200); }

TEST(Log, SpecialValues) {
  GraphBuilder b;
  const std::vector<float> values = {0.0f, -0.0f, 1.0f, -1.0f, 1e-30f, 1e30f, 1e-40f, -INFINITY};
  const int32_t n = static_cast<int32_t>(values.size());
  b.Output(Op(b, b.Input("x", kF32, {n})));
  ExpectMatchesLiteRt(b.Finish(), {F32({n}, values)});
}

TEST(Log, InfinityAndNaNStayIeee) {
  ExpectSameFloats(RunUnaryOurs(Op, {INFINITY, NAN, 1.0f}), {INFINITY, NAN, 0.0f});
}

TEST(Log, RejectsNonFloat) {
  GraphBuilder b;
  b.Output(Op(b, b.Input("x", kI32, {3})));
  ExpectRejected(b.Finish());
}

}  // namespace
}  // namespace gpuclean::testing::ewt
