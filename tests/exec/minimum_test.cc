// ctest-labels: litert
// MINIMUM against LiteRT.js, all cases in one graph: float32 with many exact ties
// over every broadcasting pattern up to rank 6, NaN on either side (std::min
// order: a NaN first operand propagates, a NaN second operand does not -
// what LiteRT.js returns), int32, uint8 (fed directly), int64 (inside the
// graph).
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

int OpMinimum(GraphBuilder& b, int x, int y) { return b.Minimum(x, y); }

const std::vector<float> kAMinimum = {NAN, 1.0f, NAN, -0.0f, 3.0f, -3.0f};
const std::vector<float> kBMinimum = {1.0f, NAN, NAN, 0.5f, 2.0f, -2.0f};

TEST(Minimum, MatchesLiteRt) {
  CaseGraph g;
  GraphBuilder& b = g.b();
  g.AddBinary(BroadcastPairs(), OpMinimum, Tied(-3, 3), Uniform(-3, 3), 900);
  g.AddBinary(BroadcastPairs(), OpMinimum, Ints(-5, 5), Ints(-5, 5), 1000);
  g.Output(OpMinimum(b, g.Input(F32({6}, kAMinimum)), g.Input(F32({6}, kBMinimum))));

  std::vector<uint8_t> uv(35), vv(7);
  for (size_t k = 0; k < uv.size(); ++k) uv[k] = static_cast<uint8_t>((k * 37) % 256);
  for (size_t k = 0; k < vv.size(); ++k) vv[k] = static_cast<uint8_t>((k * 71 + 100) % 256);
  g.Output(OpMinimum(b, g.Input(U8({5, 7}, uv)), g.Input(U8({7}, vv))));

  const int i = g.Input(RandomI32({4, 3}, 1, -9, 9));
  const int j = g.Input(RandomI32({3}, 2, -9, 9));
  g.Output(b.Cast(OpMinimum(b, b.Cast(i, kI64), b.Cast(j, kI64)), kI32));
  g.ExpectMatches();
}

TEST(Minimum, NaNOrder) {
  GraphBuilder b;
  const int in_x = b.Input("x", kF32, {6});
  const int in_y = b.Input("y", kF32, {6});
  b.Output(OpMinimum(b, in_x, in_y));
  ExpectFloatsNear(ValuesOf<float>(RunOurs(b.Finish(), {F32({6}, kAMinimum), F32({6}, kBMinimum)})[0]),
                   {NAN, 1.0f, NAN, -0.0f, 2.0f, -3.0f});
}

}  // namespace
}  // namespace gpuclean::testing::ewt
