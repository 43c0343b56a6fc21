// GELU against LiteRT.js, both forms: approximate = false (erf form, written
// with erfc) and approximate = true (tanh form), over shapes from scalar to
// rank 5 and a large tensor; special values; the two forms differ by up to
// ~4e-4 near |x| = 2.5: checked on [-3, -1], where the outputs are small
// enough for the 1e-4 tolerance to tell the forms apart, and by hand.
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

TEST(Gelu, ExactForm) {
  ExpectUnaryMatches([](GraphBuilder& b, int x) { return b.Gelu(x, false); }, -6.0f, 6.0f, 3600);
}

TEST(Gelu, ApproximateForm) {
  ExpectUnaryMatches([](GraphBuilder& b, int x) { return b.Gelu(x, true); }, -6.0f, 6.0f, 3700);
}

TEST(Gelu, SpecialValues) {
  GraphBuilder b;
  const std::vector<float> values = {0.0f, -0.0f, 1.0f, -1.0f, 1e-30f, -10.0f, -30.0f, 30.0f,
                                     1e30f, INFINITY, -INFINITY, NAN};
  const int32_t n = static_cast<int32_t>(values.size());
  const int x = b.Input("x", kF32, {n});
  b.Output(b.Gelu(x, false));
  b.Output(b.Gelu(x, true));
  ExpectMatchesLiteRt(b.Finish(), {F32({n}, values)});
}

TEST(Gelu, FormsTellApartOnLiteRt) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {64});
  b.Output(b.Gelu(x, false));
  b.Output(b.Gelu(x, true));
  ExpectMatchesLiteRt(b.Finish(), {RandomF32({64}, 3800, -3.0f, -1.0f)});
}

TEST(Gelu, FormsAreDistinct) {
  const std::vector<float> x = {-2.5f, 2.5f, -1.5f};
  const auto exact = RunUnaryOurs([](GraphBuilder& b, int t) { return b.Gelu(t, false); }, x);
  const auto approx = RunUnaryOurs([](GraphBuilder& b, int t) { return b.Gelu(t, true); }, x);
  // 0.5 x (1 + erf(x / sqrt 2)) and the tanh form, computed in double.
  for (size_t i = 0; i < x.size(); ++i) {
    const double v = x[i];
    const double e = 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
    const double a = 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
    EXPECT_NEAR(exact[i], e, 2e-6);
    EXPECT_NEAR(approx[i], a, 2e-6);
    EXPECT_GT(std::fabs(e - a), 1e-4);
  }
}

}  // namespace
}  // namespace gpuclean::testing::ewt
