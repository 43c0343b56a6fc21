// ctest-labels: litert
// POW against LiteRT.js, all cases in one graph: float32 with positive bases
// and fractional exponents over broadcasting up to rank 6, negative bases
// with integer exponents, special values (0^0 = 1, 1^NaN = 1, a negative
// base with a fractional exponent = NaN, overflow to inf); int32 with
// non-negative exponents. A negative int32 exponent fails on both sides.
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

int OpPow(GraphBuilder& b, int x, int y) { return b.Pow(x, y); }

const float kInf = INFINITY;
const std::vector<float> kBase = {0.0f, -2.0f, 1.0f, NAN, kInf, -kInf, 0.0f, -8.0f, 2.0f};
const std::vector<float> kExp = {0.0f, 0.5f, NAN, 0.0f, 2.0f, 3.0f, -1.0f, 1.0f / 3, 200.0f};

TEST(Pow, MatchesLiteRt) {
  CaseGraph g;
  g.AddBinary(BroadcastPairs(), OpPow, Uniform(0.05f, 4.0f), Uniform(-3, 3), 1100);
  g.AddBinary({{{4, 9}, {4, 9}}, {{3, 5}, {5}}}, OpPow, Uniform(-3, 3), Tied(-3, 4), 1200);
  g.AddBinary(BroadcastPairs(), OpPow, Ints(-6, 6), Ints(0, 5), 1300);
  g.Output(OpPow(g.b(), g.Input(F32({9}, kBase)), g.Input(F32({9}, kExp))));
  g.ExpectMatches();
}

TEST(Pow, SpecialValuesOnOurs) {
  GraphBuilder b;
  const int in_x = b.Input("x", kF32, {9});
  const int in_y = b.Input("y", kF32, {9});
  b.Output(OpPow(b, in_x, in_y));
  ExpectFloatsNear(ValuesOf<float>(RunOurs(b.Finish(), {F32({9}, kBase), F32({9}, kExp)})[0]),
                   {1.0f, NAN, 1.0f, 1.0f, kInf, -kInf, kInf, NAN, kInf});
}

// A scalar exponent of 2 is x * x: the correctly rounded square, bit for
// bit, special values included. LiteRT.js agrees within rounding on finite
// squares; where the square overflows it returns FLT_MAX (3.4e38 for inf^2
// and 1e30^2, measured), though its POW with a tensor exponent returns inf
// (Pow.MatchesLiteRt). Ours gives inf for both, as IEEE arithmetic and a GPU
// shader do, so overflow stays visible to the fp16 checks.
TEST(Pow, AScalarExponentOfTwoSquares) {
  std::vector<float> x = RandomValues(4000, 1400, -300.0f, 300.0f);
  x.insert(x.end(), {0.0f, -0.0f, NAN, -1e-30f, 1.0f + 0x1p-12f});
  const int finite = static_cast<int>(x.size());
  x.insert(x.end(), {kInf, -kInf, 1e30f});
  const int n = static_cast<int>(x.size());
  const auto square_of = [](int count) {
    GraphBuilder b;
    const int in_x = b.Input("x", kF32, {count});
    b.Output(OpPow(b, in_x, b.ConstF32("two", {}, {2.0f})));
    return b.Finish();
  };
  std::vector<float> want(x.size());
  for (size_t i = 0; i < x.size(); ++i) want[i] = x[i] * x[i];
  ExpectFloatsNear(ValuesOf<float>(RunOurs(square_of(n), {F32({n}, x)})[0]), want);
  x.resize(static_cast<size_t>(finite));
  ExpectMatchesLiteRt(square_of(finite), {F32({finite}, x)}, 1e-6);
}

TEST(Pow, Int32NegativeExponentFails) {
  GraphBuilder b;
  const int in_i = b.Input("i", kI32, {2});
  const int in_j = b.Input("j", kI32, {2});
  b.Output(OpPow(b, in_i, in_j));
  const ir::Model model = b.Finish();
  const std::vector<npy::Array> inputs = {I32({2}, {2, 3}), I32({2}, {1, -1})};
  ExpectInvokeFails(model, inputs, "negative exponent");
  ExpectLiteRtFails(model, inputs);
}

}  // namespace
}  // namespace gpuclean::testing::ewt
