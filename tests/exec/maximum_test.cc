// MAXIMUM against LiteRT.js: float32 with many exact ties over every
// broadcasting pattern up to rank 6, NaN on either side (std::max order: a
// NaN first operand propagates, a NaN second operand does not - what LiteRT.js
// returns), int32, uint8 (fed directly), int64 (inside the graph).
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

int Op(GraphBuilder& b, int x, int y) { return b.Maximum(x, y); }

TEST(Maximum, Float32Broadcasting) {
  auto pairs = BroadcastPairs();
  for (const auto& p : HighRankPairs()) pairs.push_back(p);
  ExpectBinaryMatches(pairs, kF32, Op, Tied(-3, 3), Uniform(-3, 3), 900);
}

TEST(Maximum, NaNAndSignedZeros) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {6});
  const int y = b.Input("y", kF32, {6});
  b.Output(b.Maximum(x, y));
  const ir::Model model = b.Finish();
  const std::vector<npy::Array> inputs = {F32({6}, {NAN, 1.0f, NAN, -0.0f, 3.0f, -3.0f}),
                                          F32({6}, {1.0f, NAN, NAN, 0.5f, 2.0f, -2.0f})};
  ExpectMatchesLiteRt(model, inputs);
  ExpectSameFloats(ValuesOf<float>(RunOurs(model, inputs)[0]), {NAN, 1.0f, NAN, 0.5f, 3.0f, -2.0f});
}

TEST(Maximum, IntegerTypes) {
  ExpectBinaryMatches(BroadcastPairs(), kI32, Op, Ints(-5, 5), Ints(-5, 5), 1000);
  GraphBuilder b;
  const int u = b.Input("u", kU8, {5, 7});
  const int v = b.Input("v", kU8, {7});
  const int i = b.Input("i", kI32, {4, 3});
  const int j = b.Input("j", kI32, {3});
  b.Output(b.Maximum(u, v));
  b.Output(b.Cast(b.Maximum(b.Cast(i, kI64), b.Cast(j, kI64)), kI32));
  std::vector<uint8_t> uv(35), vv(7);
  for (size_t k = 0; k < uv.size(); ++k) uv[k] = static_cast<uint8_t>((k * 37) % 256);
  for (size_t k = 0; k < vv.size(); ++k) vv[k] = static_cast<uint8_t>((k * 71 + 100) % 256);
  ExpectMatchesLiteRt(b.Finish(), {U8({5, 7}, uv), U8({7}, vv), RandomI32({4, 3}, 1, -9, 9), RandomI32({3}, 2, -9, 9)});
}

}  // namespace
}  // namespace gpuclean::testing::ewt
