// SELECT (v1) against LiteRT.js: a condition of x's shape, a scalar
// condition (all of x or all of y), a vector condition along x's first
// dimension (whole rows), at several ranks; element types float32, int32,
// uint8, bool and int64 (the last two made in the graph). Conditions come
// from comparisons because LiteRT.js cannot feed bools.
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

TEST(Select, ConditionShapes) {
  GraphBuilder b;
  std::vector<npy::Array> inputs;
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{2, 3, 4}, {2, 3, 4}},  // same shape
      {{}, {3, 5}},            // scalar condition
      {{4}, {4, 3, 2}},        // rows
      {{5}, {5, 7}},
      {{6}, {6}},              // rank 1: elementwise
      {{1}, {1, 9}},
      {{3}, {3, 70001}},       // large rows
      {{}, {}},
  };
  uint32_t seed = 4500;
  for (const auto& [cond_shape, x_shape] : cases) {
    const int c = b.Input("c" + std::to_string(seed), kF32, cond_shape);
    const int x = b.Input("x" + std::to_string(seed), kF32, x_shape);
    const int y = b.Input("y" + std::to_string(seed), kF32, x_shape);
    b.Output(b.Select(PositiveMask(b, c), x, y));
    inputs.push_back(RandomF32(cond_shape, seed++));
    inputs.push_back(RandomF32(x_shape, seed++, -5, 5));
    inputs.push_back(RandomF32(x_shape, seed++, -5, 5));
  }
  // The scalar condition once true and once false.
  inputs[3] = F32({}, {0.5f});
  inputs[21] = F32({}, {-0.5f});
  const ir::Model model = b.Finish();
  ExpectMatchesLiteRt(model, inputs);
  ExpectThreadsAgree(model, inputs);
}

TEST(Select, ElementTypes) {
  GraphBuilder b;
  const int c = b.Input("c", kF32, {3});
  const int i = b.Input("i", kI32, {3, 4});
  const int j = b.Input("j", kI32, {3, 4});
  const int u = b.Input("u", kU8, {3, 4});
  const int v = b.Input("v", kU8, {3, 4});
  const int cond = PositiveMask(b, c);
  b.Output(b.Select(cond, i, j));
  b.Output(b.Select(cond, u, v));
  b.Output(BoolOut(b, b.Select(cond, PositiveMask(b, i), PositiveMask(b, j))));
  b.Output(b.Cast(b.Select(cond, b.Cast(i, kI64), b.Cast(j, kI64)), kI32));
  std::vector<uint8_t> uv(12), vv(12);
  for (int k = 0; k < 12; ++k) uv[k] = static_cast<uint8_t>(k * 20), vv[k] = static_cast<uint8_t>(255 - k);
  ExpectMatchesLiteRt(b.Finish(), {F32({3}, {1, -1, 1}), RandomI32({3, 4}, 4600, -9, 9), RandomI32({3, 4}, 4601, -9, 9),
                                   U8({3, 4}, uv), U8({3, 4}, vv)});
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
