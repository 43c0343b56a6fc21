// ctest-labels: litert
// SELECT (v1) against LiteRT.js: a condition of x's shape, a scalar
// condition (all of x or all of y), a vector condition along x's first
// dimension (whole rows), at several ranks; element types float32, int32,
// uint8, bool and int64 (the last two made in the graph). Conditions come
// from comparisons because LiteRT.js cannot feed bools.
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

TEST(Select, MatchesLiteRt) {
  CaseGraph g;
  GraphBuilder& b = g.b();
  struct Case {
    Shape cond, x;
    std::optional<float> cond_value;  // a fixed scalar condition
  };
  const std::vector<Case> cases = {
      {{2, 3, 4}, {2, 3, 4}, {}},  // same shape
      {{}, {3, 5}, 0.5f},          // scalar condition, true
      {{}, {3, 5}, -0.5f},         // scalar condition, false
      {{4}, {4, 3, 2}, {}},        // whole rows
      {{5}, {5, 7}, {}},
      {{6}, {6}, {}},  // rank 1: elementwise
      {{1}, {1, 9}, {}},
      {{3}, {3, 70001}, {}},  // large rows
      {{}, {}, 1.0f},
  };
  uint32_t seed = 4500;
  for (const Case& k : cases) {
    const int c = g.Input(k.cond_value ? F32({}, {*k.cond_value}) : RandomF32(k.cond, seed));
    const int x = g.Input(RandomF32(k.x, seed + 1, -5, 5));
    const int y = g.Input(RandomF32(k.x, seed + 2, -5, 5));
    g.Output(b.Select(PositiveMask(b, c), x, y));
    seed += 3;
  }

  const int cond = PositiveMask(b, g.Input(F32({3}, {1, -1, 1})));
  const int i = g.Input(RandomI32({3, 4}, 4600, -9, 9));
  const int j = g.Input(RandomI32({3, 4}, 4601, -9, 9));
  std::vector<uint8_t> uv(12), vv(12);
  for (int k = 0; k < 12; ++k) uv[k] = static_cast<uint8_t>(k * 20), vv[k] = static_cast<uint8_t>(255 - k);
  g.Output(b.Select(cond, i, j));
  g.Output(b.Select(cond, g.Input(U8({3, 4}, uv)), g.Input(U8({3, 4}, vv))));
  g.Output(BoolOut(b, b.Select(cond, PositiveMask(b, i), PositiveMask(b, j))));
  g.Output(b.Cast(b.Select(cond, b.Cast(i, kI64), b.Cast(j, kI64)), kI32));
  g.ExpectMatches();
}

TEST(Select, HandComputedRows) {
  GraphBuilder b;
  const int c = b.Input("c", kF32, {2});
  const int x = b.Input("x", kF32, {2, 2});
  const int y = b.Input("y", kF32, {2, 2});
  b.Output(b.Select(PositiveMask(b, c), x, y));
  const auto out = RunOurs(b.Finish(), {F32({2}, {-1, 1}), F32({2, 2}, {1, 2, 3, 4}), F32({2, 2}, {5, 6, 7, 8})});
  EXPECT_EQ(ValuesOf<float>(out[0]), (std::vector<float>{5, 6, 3, 4}));
}

}  // namespace
}  // namespace gpuclean::testing::ewt
