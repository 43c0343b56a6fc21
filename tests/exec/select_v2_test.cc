// ctest-labels: litert
// SELECT_V2 against LiteRT.js: the condition, x and y broadcast against each
// other (scalars on any side, size-1 dims, mutual broadcasting up to rank 6,
// large tensors); element types float32, int32, uint8, bool and int64 (the
// last two made in the graph). Conditions come from comparisons because
// LiteRT.js cannot feed bools.
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

TEST(SelectV2, MatchesLiteRt) {
  struct Case {
    Shape c, x, y;
  };
  const std::vector<Case> cases = {
      {{2, 3, 4}, {2, 3, 4}, {2, 3, 4}},
      {{}, {3, 5}, {3, 5}},
      {{3, 5}, {}, {3, 5}},
      {{3, 5}, {3, 5}, {}},
      {{2, 1, 3}, {4, 1}, {}},
      {{1, 4, 1}, {3, 1, 1}, {1, 1, 5}},
      {{2, 1, 3, 1}, {1, 4, 1, 5}, {2, 4, 3, 1}},
      {{2, 1, 3, 1, 2}, {1, 3, 1, 4, 1}, {1, 1, 1, 1, 2}},
      {{1, 2, 1, 3, 1, 2}, {2, 1, 3, 1, 2, 1}, {2}},
      {{5, 1}, {1, 7}, {5, 7}},
      {{1}, {9}, {1}},
      {{2, 50000}, {2, 50000}, {1}},
      {{3, 1}, {3, 70000}, {3, 70000}},
  };
  CaseGraph g;
  GraphBuilder& b = g.b();
  uint32_t seed = 4700;
  for (const auto& k : cases) {
    const int c = g.Input(RandomF32(k.c, seed));
    const int x = g.Input(RandomF32(k.x, seed + 1, -5, 5));
    const int y = g.Input(RandomF32(k.y, seed + 2, -5, 5));
    g.Output(b.SelectV2(PositiveMask(b, c), x, y));
    seed += 3;
  }

  const int cond = PositiveMask(b, g.Input(F32({3, 1}, {1, -1, 1})));
  const int i = g.Input(RandomI32({4}, 4800, -9, 9));
  const int j = g.Input(RandomI32({3, 4}, 4801, -9, 9));
  std::vector<uint8_t> uv(12);
  for (int k = 0; k < 12; ++k) uv[k] = static_cast<uint8_t>(k * 20);
  g.Output(b.SelectV2(cond, i, j));
  g.Output(b.SelectV2(cond, g.Input(U8({3, 4}, uv)), g.Input(U8({}, {77}))));
  g.Output(BoolOut(b, b.SelectV2(cond, PositiveMask(b, i), PositiveMask(b, j))));
  g.Output(b.Cast(b.SelectV2(cond, b.Cast(i, kI64), b.Cast(j, kI64)), kI32));
  g.ExpectMatches();
}

TEST(SelectV2, HandComputed) {
  GraphBuilder b;
  const int c = b.Input("c", kF32, {2, 1});
  const int x = b.Input("x", kF32, {3});
  b.Output(b.SelectV2(PositiveMask(b, c), x, b.ConstF32("y", {}, {-1.0f})));
  const auto out = RunOurs(b.Finish(), {F32({2, 1}, {1, -1}), F32({3}, {1, 2, 3})});
  EXPECT_EQ(out[0].shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(ValuesOf<float>(out[0]), (std::vector<float>{1, 2, 3, -1, -1, -1}));
}

}  // namespace
}  // namespace gpuclean::testing::ewt
