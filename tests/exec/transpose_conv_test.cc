// ctest-labels: litert
// TRANSPOSE_CONV against LiteRT.js on every SIMD path: SAME (both output
// sizes a SAME forward conv maps back from) and VALID, strides 1..3, kernels
// smaller than, equal to and larger than the stride, bias and the fused
// activation of op version 4.
#include "exec/conv_test_util.h"

namespace gpuclean::testing::convt {
namespace {

TEST(TransposeConv, PaddingStridesKernels) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 5, 6, 7});
  auto w = [&](const std::string& name, int o, int kh, int kw) {
    return RandomConst(b, name, {o, kh, kw, 7}, static_cast<uint32_t>(o * 100 + kh * 10 + kw));
  };
  const int bias4 = RandomConst(b, "bias4", {4}, 1);
  b.Output(b.TransposeConv(x, w("w1", 4, 3, 3), bias4, {1, 10, 12, 4}, tfl::Padding_SAME, 2, 2));
  b.Output(b.TransposeConv(x, w("w2", 4, 3, 3), bias4, {1, 9, 11, 4}, tfl::Padding_SAME, 2, 2));
  b.Output(b.TransposeConv(x, w("w3", 4, 3, 3), bias4, {1, 11, 13, 4}, tfl::Padding_VALID, 2, 2));
  b.Output(b.TransposeConv(x, w("w4", 4, 3, 3), bias4, {1, 5, 6, 4}, tfl::Padding_SAME, 1, 1,
                           tfl::ActivationFunctionType_RELU));
  b.Output(b.TransposeConv(x, w("w5", 4, 2, 2), bias4, {1, 10, 12, 4}, tfl::Padding_SAME, 2, 2));
  b.Output(b.TransposeConv(x, w("w6", 4, 4, 4), bias4, {1, 10, 12, 4}, tfl::Padding_SAME, 2, 2,
                           tfl::ActivationFunctionType_RELU6));
  b.Output(b.TransposeConv(x, w("w7", 4, 3, 5), bias4, {1, 15, 18, 4}, tfl::Padding_SAME, 3, 3));
  const int bias20 = RandomConst(b, "bias20", {20}, 2);
  b.Output(b.TransposeConv(x, w("w8", 20, 3, 3), bias20, {1, 10, 12, 20}, tfl::Padding_SAME, 2, 2));
  ExpectMatchesLiteRtAllIsas(b.Finish(), {RandomF32({1, 5, 6, 7}, 3)});
}

TEST(TransposeConv, KernelSmallerThanStrideAndBatch) {
  // XNNPACK refuses kernels smaller than the stride; LiteRT's own kernel runs
  // them: outputs no tap reaches are just the bias.
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {2, 4, 3, 3});
  b.Output(b.TransposeConv(x, RandomConst(b, "w", {2, 1, 1, 3}, 4), RandomConst(b, "b", {2}, 5), {2, 8, 6, 2},
                           tfl::Padding_SAME, 2, 2));
  b.Output(b.TransposeConv(x, RandomConst(b, "w2", {5, 3, 3, 3}, 6), RandomConst(b, "b2", {5}, 7), {2, 4, 3, 5},
                           tfl::Padding_SAME, 1, 1));
  ExpectMatchesLiteRtAllIsas(b.Finish(), {RandomF32({2, 4, 3, 3}, 8)});
}

TEST(TransposeConv, HandComputed) {
  // 2x2 kernel of ones, stride 2: each input value fills its 2x2 block.
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 2, 2, 1});
  b.Output(b.TransposeConv(x, b.ConstF32("w", {1, 2, 2, 1}, {1, 1, 1, 1}), b.ConstF32("b", {1}, {0.5f}), {1, 4, 4, 1},
                           tfl::Padding_VALID, 2, 2));
  ExpectOursAllIsas(b.Finish(), {F32({1, 2, 2, 1}, {1, 2, 3, 4})}, 0,
                    {1.5f, 1.5f, 2.5f, 2.5f, 1.5f, 1.5f, 2.5f, 2.5f, 3.5f, 3.5f, 4.5f, 4.5f, 3.5f, 3.5f, 4.5f, 4.5f});
}

}  // namespace
}  // namespace gpuclean::testing::convt
