// ctest-labels: litert
// GELU against LiteRT.js, all cases in one graph, both forms: approximate =
// false (erf form, written with erfc) and approximate = true (tanh form),
// over shapes from scalar to rank 5 and a large tensor, and special values.
// The forms differ by up to ~4e-4 near |x| = 2.5: a case on [-3, -1], where
// the outputs are small enough for the 1e-4 tolerance to tell them apart,
// and a hand-computed test keep a swap of the forms from passing.
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

int Exact(GraphBuilder& b, int x) { return b.Gelu(x, false); }
int Approximate(GraphBuilder& b, int x) { return b.Gelu(x, true); }

TEST(Gelu, MatchesLiteRt) {
  CaseGraph g;
  const std::vector<float> special = {0.0f,   -0.0f, 1.0f,  -1.0f,    1e-30f,    -10.0f,
                                      -30.0f, 30.0f, 1e30f, INFINITY, -INFINITY, NAN};
  g.AddUnary(Exact, -6.0f, 6.0f, 3600);
  g.AddUnary(Approximate, -6.0f, 6.0f, 3700);
  g.AddValues(Exact, special);
  g.AddValues(Approximate, special);
  const int x = g.Input(RandomF32({64}, 3800, -3.0f, -1.0f));
  g.Output(Exact(g.b(), x));
  g.Output(Approximate(g.b(), x));
  g.ExpectMatches();
}

TEST(Gelu, FormsAreDistinct) {
  const std::vector<float> x = {-2.5f, 2.5f, -1.5f};
  const auto exact = RunUnaryOurs(Exact, x);
  const auto approx = RunUnaryOurs(Approximate, x);
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
