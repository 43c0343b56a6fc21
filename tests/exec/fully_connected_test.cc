// ctest-labels: litert
// FULLY_CONNECTED against LiteRT.js on every SIMD path: few rows (the
// dot-product path) and many (the packed GEMM), long reductions, outputs of
// width 1 and around the register tiles, keep_num_dims, no bias, activations.
#include "exec/conv_test_util.h"

namespace gpuclean::testing::convt {
namespace {

TEST(FullyConnected, RowsDepthsAndActivations) {
  GraphBuilder b;
  const int v = b.Input("v", tfl::TensorType_FLOAT32, {1, 1152});
  const int m = b.Input("m", tfl::TensorType_FLOAT32, {3, 50});
  const int t = b.Input("t", tfl::TensorType_FLOAT32, {17, 50});
  const int r = b.Input("r", tfl::TensorType_FLOAT32, {2, 3, 20});
  b.Output(b.FullyConnected(v, RandomConst(b, "w1", {63, 1152}, 1), RandomConst(b, "b1", {63}, 2)));
  b.Output(b.FullyConnected(v, RandomConst(b, "w2", {1, 1152}, 3), RandomConst(b, "b2", {1}, 4),
                            tfl::ActivationFunctionType_RELU));
  b.Output(b.FullyConnected(m, RandomConst(b, "w3", {40, 50}, 5), kNoInput, tfl::ActivationFunctionType_RELU6));
  b.Output(b.FullyConnected(t, RandomConst(b, "w4", {33, 50}, 6), RandomConst(b, "b4", {33}, 7),
                            tfl::ActivationFunctionType_RELU_N1_TO_1));
  b.Output(b.FullyConnected(t, RandomConst(b, "w5", {130, 50}, 8), RandomConst(b, "b5", {130}, 9)));
  b.Output(b.FullyConnected(r, RandomConst(b, "w6", {9, 20}, 10), RandomConst(b, "b6", {9}, 11),
                            tfl::ActivationFunctionType_NONE, /*keep_num_dims=*/true));
  b.Output(b.FullyConnected(r, RandomConst(b, "w7", {5, 60}, 12), RandomConst(b, "b7", {5}, 13)));
  ExpectMatchesLiteRtAllIsas(b.Finish(), {RandomF32({1, 1152}, 21), RandomF32({3, 50}, 22), RandomF32({17, 50}, 23),
                                          RandomF32({2, 3, 20}, 24)});
}

TEST(FullyConnected, LongReductions) {
  // Many rows (several K blocks accumulated in C), and few rows against many
  // outputs (the transposed product, transposed back with bias and clamp).
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {40, 1500});
  const int s = b.Input("s", tfl::TensorType_FLOAT32, {6, 700});
  b.Output(b.FullyConnected(x, RandomConst(b, "w", {70, 1500}, 1), RandomConst(b, "b", {70}, 2)));
  b.Output(b.FullyConnected(s, RandomConst(b, "w2", {50, 700}, 4), RandomConst(b, "b2", {50}, 5),
                            tfl::ActivationFunctionType_RELU6));
  b.Output(b.FullyConnected(s, RandomConst(b, "w3", {64, 700}, 6), kNoInput));
  ExpectMatchesLiteRtAllIsas(b.Finish(), {RandomF32({40, 1500}, 3), RandomF32({6, 700}, 7)});
}

TEST(FullyConnected, HandComputed) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {2, 3});
  b.Output(b.FullyConnected(x, b.ConstF32("w", {2, 3}, {1, 0, -1, 0.5f, 0.5f, 0.5f}), b.ConstF32("b", {2}, {1, -1}),
                            tfl::ActivationFunctionType_RELU));
  // Row 0: [1-3+1 -> relu 0, 3-1]; row 1: [4-6+1 -> relu 0, 7.5-1].
  ExpectOursAllIsas(b.Finish(), {F32({2, 3}, {1, 2, 3, 4, 5, 6})}, 0, {0.0f, 2.0f, 0.0f, 6.5f});
}

TEST(FullyConnected, RejectsInt8Weights) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 2});
  b.Output(b.FullyConnected(x, b.ConstInt8("w", {3, 2}, {1, 2, 3, 4, 5, 6}, 0.5f, 0), kNoInput));
  ExpectInterpreterRefuses(b.Finish());
}

}  // namespace
}  // namespace gpuclean::testing::convt
