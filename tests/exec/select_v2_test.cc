// SELECT_V2 against LiteRT.js: the condition, x and y broadcast against each
// other (scalars on any side, size-1 dims, mutual broadcasting up to rank 4,
// large tensors); element types float32, int32, uint8, bool and int64 (the
// last two made in the graph). Conditions come from comparisons because
// LiteRT.js cannot feed bools.
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

TEST(SelectV2, Broadcasting) {
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
      {{5, 1}, {1, 7}, {5, 7}},
      {{1}, {9}, {1}},
      {{2, 50000}, {2, 50000}, {1}},
      {{3, 1}, {3, 70000}, {3, 70000}},
  };
  GraphBuilder b;
  std::vector<npy::Array> inputs;
  uint32_t seed = 4700;
  for (const auto& k : cases) {
    const int c = b.Input("c" + std::to_string(seed), kF32, k.c);
    const int x = b.Input("x" + std::to_string(seed), kF32, k.x);
    const int y = b.Input("y" + std::to_string(seed), kF32, k.y);
    b.Output(b.SelectV2(PositiveMask(b, c), x, y));
    inputs.push_back(RandomF32(k.c, seed++));
    inputs.push_back(RandomF32(k.x, seed++, -5, 5));
    inputs.push_back(RandomF32(k.y, seed++, -5, 5));
  }
  const ir::Model model = b.Finish();
  ExpectMatchesLiteRt(model, inputs);
  ExpectThreadsAgree(model, inputs);
}

TEST(SelectV2, ElementTypes) {
  GraphBuilder b;
  const int c = b.Input("c", kF32, {3, 1});
  const int i = b.Input("i", kI32, {4});
  const int j = b.Input("j", kI32, {3, 4});
  const int u = b.Input("u", kU8, {3, 4});
  const int v = b.Input("v", kU8, {});
  const int cond = PositiveMask(b, c);
  b.Output(b.SelectV2(cond, i, j));
  b.Output(b.SelectV2(cond, u, v));
  b.Output(BoolOut(b, b.SelectV2(cond, PositiveMask(b, i), PositiveMask(b, j))));
  b.Output(b.Cast(b.SelectV2(cond, b.Cast(i, kI64), b.Cast(j, kI64)), kI32));
  std::vector<uint8_t> uv(12);
  for (int k = 0; k < 12; ++k) uv[k] = static_cast<uint8_t>(k * 20);
  ExpectMatchesLiteRt(b.Finish(), {F32({3, 1}, {1, -1, 1}), RandomI32({4}, 4800, -9, 9),
                                   RandomI32({3, 4}, 4801, -9, 9), U8({3, 4}, uv), U8({}, {77})});
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
