// ctest-labels: litert
// LEAKY_RELU against LiteRT.js, all cases in one graph: alphas 0.2, 0, 1,
// negative and above 1 over shapes from scalar to rank 5 and a large tensor,
// and special values. On ours: the values by hand.
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

const std::vector<float> kSpecialLeakyRelu = {0.0f, -0.0f, 1.0f, -1.0f, 1e-40f, -1e30f, INFINITY, -INFINITY, NAN};

TEST(LeakyRelu, MatchesLiteRt) {
  CaseGraph g;
  uint32_t seed = 3500;
  for (float alpha : {0.2f, 0.0f, 1.0f, -0.5f, 3.0f}) {
    auto op = [alpha](GraphBuilder& b, int x) { return b.LeakyRelu(x, alpha); };
    g.AddUnary(op, -5.0f, 5.0f, seed);
    g.AddValues(op, kSpecialLeakyRelu);
    seed += 10;
  }
  g.ExpectMatches();
}

TEST(LeakyRelu, HandComputed) {
  const auto got = RunUnaryOurs([](GraphBuilder& b, int x) { return b.LeakyRelu(x, 0.1f); }, kSpecialLeakyRelu);
  ExpectFloatsNear(got, {0.0f, -0.0f, 1.0f, 0.1f * -1.0f, 1e-40f, 0.1f * -1e30f, INFINITY, -INFINITY, NAN});
}

}  // namespace
}  // namespace gpuclean::testing::ewt
