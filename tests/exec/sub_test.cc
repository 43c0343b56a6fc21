// SUB against LiteRT.js: float32 over every broadcasting pattern up to rank 6
// (same shape, scalars on either side, size-1 dims, odd and large sizes),
// each fused activation (TANH and SIGN_BIT are ignored by LiteRT), int32 and
// int64 (made inside the graph with CASTs), constant operands; int32
// wrap-around and dtype rejection on our side.
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

int Sub(GraphBuilder& b, int x, int y) { return b.Sub(x, y); }

TEST(Sub, Float32Broadcasting) {
  auto pairs = BroadcastPairs();
  for (const auto& p : HighRankPairs()) pairs.push_back(p);
  ExpectBinaryMatches(pairs, kF32, Sub, Uniform(-10, 10), Uniform(-10, 10), 300);
}

TEST(Sub, FusedActivations) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {3, 17});
  const int y = b.Input("y", kF32, {3, 1});
  const int i = b.Input("i", kI32, {3, 17});
  const int j = b.Input("j", kI32, {3, 1});
  for (auto act : {tfl::ActivationFunctionType_RELU, tfl::ActivationFunctionType_RELU6,
                   tfl::ActivationFunctionType_RELU_N1_TO_1, tfl::ActivationFunctionType_TANH,
                   tfl::ActivationFunctionType_SIGN_BIT}) {
    b.Output(b.Sub(x, y, act));
    b.Output(b.Sub(i, j, act));
  }
  const ir::Model model = b.Finish();
  const std::vector<npy::Array> inputs = {RandomF32({3, 17}, 11, -4, 4), RandomF32({3, 1}, 12, -4, 4),
                                          RandomI32({3, 17}, 13, -4, 4), RandomI32({3, 1}, 14, -4, 4)};
  ExpectMatchesLiteRt(model, inputs);
}

TEST(Sub, Int32Broadcasting) {
  ExpectBinaryMatches(BroadcastPairs(), kI32, Sub, Ints(-100000, 100000), Ints(-100000, 100000), 400);
}

TEST(Sub, Int64InsideTheGraph) {
  GraphBuilder b;
  const int x = b.Input("x", kI32, {4, 6});
  const int y = b.Input("y", kI32, {4, 1});
  const int r = b.Sub(b.Cast(x, kI64), b.Cast(y, kI64), tfl::ActivationFunctionType_RELU6);
  b.Output(b.Cast(r, kI32));
  b.Output(b.Cast(b.Sub(b.Cast(y, kI64), b.Cast(x, kI64)), kI32));
  const ir::Model model = b.Finish();
  ExpectMatchesLiteRt(model, {RandomI32({4, 6}, 21, -50, 50), RandomI32({4, 1}, 22, -50, 50)});
}

TEST(Sub, ConstantOperands) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {2, 3, 4});
  const int c = b.ConstF32("c", {4}, {0.5f, -1.5f, 2.0f, 100.0f});
  const int k = b.ConstF32("k", {3, 1}, {1.0f, 2.0f, 3.0f});
  b.Output(b.Sub(x, c));
  b.Output(b.Sub(c, x, tfl::ActivationFunctionType_RELU));
  b.Output(b.Sub(b.Sub(c, k), x));  // the constant-only op is folded at prepare
  ExpectMatchesLiteRt(b.Finish(), {RandomF32({2, 3, 4}, 31, -5, 5)});
}

TEST(Sub, Int32Wraps) {
  GraphBuilder b;
  const int i = b.Input("i", kI32, {3});
  const int j = b.Input("j", kI32, {3});
  b.Output(b.Sub(i, j));
  const auto out = RunOurs(b.Finish(), {I32({3}, {-2147483647 - 1, 2147483647, 5}), I32({3}, {1, -1, 7})});
  EXPECT_EQ(ValuesOf<int32_t>(out[0]), (std::vector<int32_t>{2147483647, -2147483647 - 1, -2}));
}

TEST(Sub, RejectsUnsupportedDtypes) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_INT16, {3});
  b.Output(b.Sub(x, x));
  ExpectRejected(b.Finish());
}

}  // namespace
}  // namespace gpuclean::testing::ewt
