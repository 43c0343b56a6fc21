// ctest-labels: litert
// DEPTHWISE_CONV_2D against LiteRT.js on every SIMD path: 3x3 and 5x5
// (weights held in registers), other sizes (taps read from memory), SAME and
// VALID, strides, dilations, activations, channel counts that leave every
// lane tail (16/8/4/1), depth multipliers, batches, windows larger than the
// input.
#include "exec/conv_test_util.h"

namespace gpuclean::testing::convt {
namespace {

TEST(DepthwiseConv2D, FilterSizesPaddingStridesDilations) {
  GraphBuilder b;
  const int c = 37;  // 2x16 + 4 + 1: every lane tail
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 13, 11, c});
  auto w = [&](const std::string& name, int kh, int kw) { return RandomConst(b, name, {1, kh, kw, c}, kh * 10 + kw); };
  const int bias = RandomConst(b, "bias", {c}, 99);
  b.Output(b.DepthwiseConv2D(x, w("w1", 3, 3), bias, tfl::Padding_SAME, 1, 1, tfl::ActivationFunctionType_RELU6));
  b.Output(b.DepthwiseConv2D(x, w("w2", 3, 3), bias, tfl::Padding_VALID, 2, 2));
  b.Output(b.DepthwiseConv2D(x, w("w3", 5, 5), bias, tfl::Padding_SAME, 2, 2, tfl::ActivationFunctionType_RELU));
  b.Output(b.DepthwiseConv2D(x, w("w4", 3, 3), bias, tfl::Padding_SAME, 1, 1, tfl::ActivationFunctionType_NONE, 2, 2));
  b.Output(b.DepthwiseConv2D(x, w("w5", 2, 4), bias, tfl::Padding_SAME, 1, 1));
  b.Output(
      b.DepthwiseConv2D(x, w("w6", 1, 1), bias, tfl::Padding_VALID, 1, 1, tfl::ActivationFunctionType_RELU_N1_TO_1));
  b.Output(b.DepthwiseConv2D(x, w("w7", 7, 7), bias, tfl::Padding_SAME, 3, 1));
  b.Output(b.DepthwiseConv2D(x, w("w8", 5, 5), bias, tfl::Padding_VALID, 1, 2, tfl::ActivationFunctionType_NONE, 1, 2));
  ExpectMatchesLiteRtAllIsas(b.Finish(), {RandomF32({1, 13, 11, c}, 1)});
}

TEST(DepthwiseConv2D, ChannelCountsAndBatch) {
  GraphBuilder b;
  std::vector<npy::Array> inputs;
  for (int c : {1, 3, 8, 16, 24, 72}) {
    const std::string s = std::to_string(c);
    const int x = b.Input("x" + s, tfl::TensorType_FLOAT32, {2, 9, 8, c});
    inputs.push_back(RandomF32({2, 9, 8, c}, c));
    b.Output(b.DepthwiseConv2D(x, RandomConst(b, "w" + s, {1, 3, 3, c}, 10 + c), RandomConst(b, "b" + s, {c}, 20 + c),
                               tfl::Padding_SAME, 2, 2, tfl::ActivationFunctionType_RELU));
  }
  ExpectMatchesLiteRtAllIsas(b.Finish(), inputs);
}

TEST(DepthwiseConv2D, DepthMultiplier) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {2, 7, 6, 5});
  b.Output(b.DepthwiseConv2D(x, RandomConst(b, "w1", {1, 3, 3, 15}, 1), RandomConst(b, "b1", {15}, 2),
                             tfl::Padding_SAME, 1, 1));
  b.Output(b.DepthwiseConv2D(x, RandomConst(b, "w2", {1, 5, 5, 10}, 3), RandomConst(b, "b2", {10}, 4),
                             tfl::Padding_VALID, 1, 1, tfl::ActivationFunctionType_RELU));
  ExpectMatchesLiteRtAllIsas(b.Finish(), {RandomF32({2, 7, 6, 5}, 5)});
}

TEST(DepthwiseConv2D, WindowLargerThanInput) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 2, 1, 20});
  b.Output(b.DepthwiseConv2D(x, RandomConst(b, "w1", {1, 3, 3, 20}, 1), RandomConst(b, "b1", {20}, 2),
                             tfl::Padding_SAME, 1, 1));
  b.Output(b.DepthwiseConv2D(x, RandomConst(b, "w2", {1, 5, 5, 20}, 3), RandomConst(b, "b2", {20}, 4),
                             tfl::Padding_SAME, 2, 2));
  ExpectMatchesLiteRtAllIsas(b.Finish(), {RandomF32({1, 2, 1, 20}, 6)});
}

TEST(DepthwiseConv2D, MissingBiasIsZeroBias) {
  // LiteRT.js cannot run a DEPTHWISE_CONV_2D without bias, so the omitted
  // bias is checked against an explicit zero bias.
  auto model = [](bool with_bias) {
    GraphBuilder b;
    const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 9, 8, 21});
    const int w = RandomConst(b, "w", {1, 3, 3, 21}, 1);
    b.Output(b.DepthwiseConv2D(x, w, with_bias ? b.ConstF32("b", {21}, std::vector<float>(21, 0.0f)) : kNoInput,
                               tfl::Padding_SAME, 2, 1, tfl::ActivationFunctionType_RELU6));
    return b.Finish();
  };
  const std::vector<npy::Array> in = {RandomF32({1, 9, 8, 21}, 3)};
  IsaGuard guard;
  for (conv::Isa isa : AvailableIsas()) {
    SCOPED_TRACE(conv::IsaName(conv::SetIsaForTesting(isa)));
    EXPECT_TRUE(RunOurs(model(false), in)[0].data == RunOurs(model(true), in)[0].data);
  }
}

TEST(DepthwiseConv2D, HandComputed) {
  // Channel 0 sums its 3x3 neighbourhood, channel 1 doubles the centre.
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 3, 3, 2});
  std::vector<float> w(18, 0.0f);
  for (int t = 0; t < 9; ++t) w[t * 2] = 1.0f;
  w[4 * 2 + 1] = 2.0f;
  b.Output(b.DepthwiseConv2D(x, b.ConstF32("w", {1, 3, 3, 2}, w), kNoInput, tfl::Padding_SAME, 1, 1));
  std::vector<float> in(18);
  for (int i = 0; i < 9; ++i) in[i * 2] = in[i * 2 + 1] = static_cast<float>(i + 1);
  ExpectOursAllIsas(b.Finish(), {F32({1, 3, 3, 2}, in)}, 0,
                    {12, 2, 21, 4, 16, 6, 27, 8, 45, 10, 33, 12, 24, 14, 39, 16, 28, 18});
}

}  // namespace
}  // namespace gpuclean::testing::convt
