// POW against LiteRT.js: float32 with positive bases and fractional
// exponents, negative bases with integer exponents, broadcasting up to rank 4,
// special values (0^0, negative base with a fractional exponent = NaN, inf);
// int32 with non-negative exponents. A negative int32 exponent fails on both.
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

int Pow(GraphBuilder& b, int x, int y) { return b.Pow(x, y); }

TEST(Pow, Float32Broadcasting) {
  ExpectBinaryMatches(BroadcastPairs(), kF32, Pow, Uniform(0.05f, 4.0f), Uniform(-3, 3), 1100);
  // Negative bases with integer-valued exponents.
  ExpectBinaryMatches({{{4, 9}, {4, 9}}, {{3, 5}, {5}}}, kF32, Pow, Uniform(-3, 3), Tied(-3, 4), 1200);
}

TEST(Pow, SpecialValues) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {9});
  const int y = b.Input("y", kF32, {9});
  b.Output(b.Pow(x, y));
  const float inf = INFINITY;
  const std::vector<npy::Array> inputs = {F32({9}, {0.0f, -2.0f, 1.0f, NAN, inf, -inf, 0.0f, -8.0f, 2.0f}),
                                          F32({9}, {0.0f, 0.5f, NAN, 0.0f, 2.0f, 3.0f, -1.0f, 1.0f / 3, 200.0f})};
  const ir::Model model = b.Finish();
  ExpectMatchesLiteRt(model, inputs);
  ExpectSameFloats(ValuesOf<float>(RunOurs(model, inputs)[0]), {1.0f, NAN, 1.0f, 1.0f, inf, -inf, inf, NAN, inf});
}

TEST(Pow, Int32) {
  ExpectBinaryMatches(BroadcastPairs(), kI32, Pow, Ints(-6, 6), Ints(0, 5), 1300);
}

TEST(Pow, Int32NegativeExponentFails) {
  GraphBuilder b;
  const int i = b.Input("i", kI32, {2});
  const int j = b.Input("j", kI32, {2});
  b.Output(b.Pow(i, j));
  const ir::Model model = b.Finish();
  const std::vector<npy::Array> inputs = {I32({2}, {2, 3}), I32({2}, {1, -1})};
  ExpectInvokeFails(model, inputs, "negative exponent");
  ExpectLiteRtFails(model, inputs);
}

}  // namespace
}  // namespace gpuclean::testing::ewt
