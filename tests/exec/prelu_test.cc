// ctest-labels: litert
// PRELU against LiteRT.js, all cases in one graph: alpha per channel as a
// constant (the converters' layouts [C] and [1, 1, C]), alpha of the input's
// shape fed at run time, alpha broadcast along other axes, a scalar alpha,
// special values. LiteRT requires alpha to broadcast into the input (the
// output keeps the input's shape; a mutual broadcast fails to prepare).
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

TEST(Prelu, MatchesLiteRt) {
  CaseGraph g;
  GraphBuilder& b = g.b();
  const int x = g.Input(RandomF32({1, 4, 5, 3}, 3900, -4, 4));
  const int big = g.Input(RandomF32({2, 97, 131, 3}, 3901, -4, 4));
  const int a1 = b.ConstF32("a1", {3}, {0.25f, -0.5f, 1.5f});
  const int a2 = b.ConstF32("a2", {1, 1, 3}, {0.0f, 2.0f, 0.1f});
  g.Output(b.Prelu(x, a1));
  g.Output(b.Prelu(x, a2));
  g.Output(b.Prelu(big, a1));
  g.Output(b.Prelu(g.Input(RandomF32({2, 5, 3}, 3910, -4, 4)), g.Input(RandomF32({2, 5, 3}, 3911, -2, 2))));
  g.Output(b.Prelu(g.Input(RandomF32({2, 6}, 3912, -4, 4)), g.Input(RandomF32({2, 1}, 3913, -2, 2))));
  g.Output(b.Prelu(g.Input(RandomF32({4, 5, 3}, 3914, -4, 4)), g.Input(RandomF32({5, 1}, 3915, -2, 2))));
  g.Output(
      b.Prelu(g.Input(F32({7}, {0.0f, -0.0f, -1.0f, 2.0f, -INFINITY, INFINITY, NAN})), b.ConstF32("as", {}, {0.3f})));
  g.ExpectMatches();
}

TEST(Prelu, HandComputed) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {2, 3});
  b.Output(b.Prelu(x, b.ConstF32("a", {3}, {0.5f, -1.0f, 0.0f})));
  const auto out = RunOurs(b.Finish(), {F32({2, 3}, {-2.0f, -2.0f, -2.0f, 4.0f, 0.0f, NAN})});
  ExpectFloatsNear(ValuesOf<float>(out[0]), {-1.0f, 2.0f, -0.0f, 4.0f, 0.0f, NAN});
}

}  // namespace
}  // namespace gpuclean::testing::ewt
