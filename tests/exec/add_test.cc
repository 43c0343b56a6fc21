// ADD against LiteRT.js: float32 over every broadcasting pattern up to rank 6
// (same shape, scalars, size-1 dims, odd and large sizes), each fused
// activation (TANH and SIGN_BIT are ignored by LiteRT: no clamp), int32 and
// int64 (made inside the graph with CASTs), a constant operand; int32
// wrap-around and dtype rejection on our side.
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

int Add(GraphBuilder& b, int x, int y) { return b.Add(x, y); }

TEST(Add, Float32Broadcasting) {
  auto pairs = BroadcastPairs();
  for (const auto& p : HighRankPairs()) pairs.push_back(p);
  ExpectBinaryMatches(pairs, kF32, Add, Uniform(-10, 10), Uniform(-10, 10), 100);
}

TEST(Add, FusedActivations) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {3, 17});
  const int y = b.Input("y", kF32, {17});
  const int i = b.Input("i", kI32, {3, 17});
  const int j = b.Input("j", kI32, {17});
  for (auto act : {tfl::ActivationFunctionType_RELU, tfl::ActivationFunctionType_RELU6,
                   tfl::ActivationFunctionType_RELU_N1_TO_1, tfl::ActivationFunctionType_TANH,
                   tfl::ActivationFunctionType_SIGN_BIT}) {
    b.Output(b.Add(x, y, act));
    b.Output(b.Add(i, j, act));
  }
  const ir::Model model = b.Finish();
  const std::vector<npy::Array> inputs = {RandomF32({3, 17}, 11, -8, 8), RandomF32({17}, 12, -8, 8),
                                          RandomI32({3, 17}, 13, -9, 9), RandomI32({17}, 14, -9, 9)};
  ExpectMatchesLiteRt(model, inputs);
}

TEST(Add, Int32Broadcasting) {
  ExpectBinaryMatches(BroadcastPairs(), kI32, Add, Ints(-100000, 100000), Ints(-100000, 100000), 200);
}

TEST(Add, Int64InsideTheGraph) {
  GraphBuilder b;
  const int x = b.Input("x", kI32, {4, 6});
  const int y = b.Input("y", kI32, {6});
  const int s = b.Add(b.Cast(x, kI64), b.Cast(y, kI64), tfl::ActivationFunctionType_RELU);
  b.Output(b.Cast(s, kI32));
  const ir::Model model = b.Finish();
  ExpectMatchesLiteRt(model, {RandomI32({4, 6}, 21, -50, 50), RandomI32({6}, 22, -50, 50)});
}

TEST(Add, ConstantOperands) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {2, 3, 4});
  const int c = b.ConstF32("c", {4}, {0.5f, -1.5f, 2.0f, 100.0f});
  const int k = b.ConstF32("k", {3, 1}, {1.0f, 2.0f, 3.0f});
  b.Output(b.Add(x, c));
  b.Output(b.Add(c, x, tfl::ActivationFunctionType_RELU6));
  b.Output(b.Add(b.Add(c, k), x));  // the constant-only ADD is folded at prepare
  ExpectMatchesLiteRt(b.Finish(), {RandomF32({2, 3, 4}, 31, -5, 5)});
}

TEST(Add, Int32WrapsAndInfinities) {
  GraphBuilder b;
  const int i = b.Input("i", kI32, {3});
  const int j = b.Input("j", kI32, {3});
  const int x = b.Input("x", kF32, {4});
  const int y = b.Input("y", kF32, {4});
  b.Output(b.Add(i, j));
  b.Output(b.Add(x, y));
  const float inf = INFINITY;
  const auto out = RunOurs(b.Finish(), {I32({3}, {2147483647, -2147483647 - 1, 5}), I32({3}, {1, -1, -7}),
                                        F32({4}, {inf, inf, 3e38f, 1.0f}), F32({4}, {1.0f, -inf, 3e38f, NAN})});
  EXPECT_EQ(ValuesOf<int32_t>(out[0]), (std::vector<int32_t>{-2147483647 - 1, 2147483647, -2}));
  ExpectSameFloats(ValuesOf<float>(out[1]), {inf, NAN, inf, NAN});
}

TEST(Add, RejectsUnsupportedDtypes) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_INT16, {3});
  b.Output(b.Add(x, x));
  ExpectRejected(b.Finish());
}

}  // namespace
}  // namespace gpuclean::testing::ewt
