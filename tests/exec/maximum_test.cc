// ctest-labels: litert
// MAXIMUM against LiteRT.js, all cases in one graph: float32 with many exact ties
// over every broadcasting pattern up to rank 6, NaN on either side (std::max
// order: a NaN first operand propagates, a NaN second operand does not -
// what LiteRT.js returns), int32, uint8 (fed directly), int64 (inside the
// graph).
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

int OpMaximum(GraphBuilder& b, int x, int y) { return b.Maximum(x, y); }

const std::vector<float> kAMaximum = {NAN, 1.0f, NAN, -0.0f, 3.0f, -3.0f};
const std::vector<float> kBMaximum = {1.0f, NAN, NAN, 0.5f, 2.0f, -2.0f};

TEST(Maximum, MatchesLiteRt) {
  CaseGraph g;
  GraphBuilder& b = g.b();
  g.AddBinary(BroadcastPairs(), OpMaximum, Tied(-3, 3), Uniform(-3, 3), 900);
  g.AddBinary(BroadcastPairs(), OpMaximum, Ints(-5, 5), Ints(-5, 5), 1000);
  g.Output(OpMaximum(b, g.Input(F32({6}, kAMaximum)), g.Input(F32({6}, kBMaximum))));

  std::vector<uint8_t> uv(35), vv(7);
  for (size_t k = 0; k < uv.size(); ++k) uv[k] = static_cast<uint8_t>((k * 37) % 256);
  for (size_t k = 0; k < vv.size(); ++k) vv[k] = static_cast<uint8_t>((k * 71 + 100) % 256);
  g.Output(OpMaximum(b, g.Input(U8({5, 7}, uv)), g.Input(U8({7}, vv))));

  const int i = g.Input(RandomI32({4, 3}, 1, -9, 9));
  const int j = g.Input(RandomI32({3}, 2, -9, 9));
  g.Output(b.Cast(OpMaximum(b, b.Cast(i, kI64), b.Cast(j, kI64)), kI32));
  g.ExpectMatches();
}

TEST(Maximum, NaNOrder) {
  GraphBuilder b;
  const int in_x = b.Input("x", kF32, {6});
  const int in_y = b.Input("y", kF32, {6});
  b.Output(OpMaximum(b, in_x, in_y));
  ExpectFloatsNear(ValuesOf<float>(RunOurs(b.Finish(), {F32({6}, kAMaximum), F32({6}, kBMaximum)})[0]),
                   {NAN, 1.0f, NAN, 0.5f, 3.0f, -2.0f});
}

}  // namespace
}  // namespace gpuclean::testing::ewt
