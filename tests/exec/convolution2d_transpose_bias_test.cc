// ctest-labels: litert slow
// Convolution2DTransposeBias (MediaPipe custom op) against LiteRT.js, which
// runs it through XNNPACK: the selfie-segmentation head (2x2 stride 2 SAME),
// kernels larger than the stride, odd input sizes (MediaPipe sizes the output
// stride*(in-1) + k - padding), VALID, several output channels. Plus the
// fixture model's own node and its 12-byte options.
#include "exec/conv_test_util.h"
#include "gpuclean/shapes.h"

namespace gpuclean::testing::convt {
namespace {

TEST(Convolution2DTransposeBias, PaddingStridesAndSizes) {
  GraphBuilder b;
  const int even = b.Input("even", tfl::TensorType_FLOAT32, {1, 8, 6, 16});
  const int odd = b.Input("odd", tfl::TensorType_FLOAT32, {2, 5, 7, 3});
  auto w = [&](const std::string& name, const Shape& shape) {
    return RandomConst(b, name, shape, static_cast<uint32_t>(CountOf(shape)));
  };
  b.Output(b.Convolution2DTransposeBias(even, w("w1", {1, 2, 2, 16}), RandomConst(b, "b1", {1}, 1), tfl::Padding_SAME,
                                        2, 2));
  b.Output(b.Convolution2DTransposeBias(even, w("w2", {5, 3, 3, 16}), RandomConst(b, "b2", {5}, 2), tfl::Padding_SAME,
                                        2, 2));
  b.Output(b.Convolution2DTransposeBias(even, w("w3", {4, 4, 4, 16}), RandomConst(b, "b3", {4}, 3), tfl::Padding_VALID,
                                        2, 2));
  b.Output(
      b.Convolution2DTransposeBias(odd, w("w4", {2, 2, 2, 3}), RandomConst(b, "b4", {2}, 4), tfl::Padding_SAME, 2, 2));
  b.Output(
      b.Convolution2DTransposeBias(odd, w("w5", {6, 3, 3, 3}), RandomConst(b, "b5", {6}, 5), tfl::Padding_SAME, 2, 2));
  b.Output(
      b.Convolution2DTransposeBias(odd, w("w6", {2, 3, 3, 3}), RandomConst(b, "b6", {2}, 6), tfl::Padding_SAME, 1, 1));
  ExpectMatchesLiteRtAllIsas(b.Finish(), {RandomF32({1, 8, 6, 16}, 7), RandomF32({2, 5, 7, 3}, 8)});
}

TEST(Convolution2DTransposeBias, FixtureNodeOptions) {
  // selfie_segmentation.tflite: SAME, stride 2x2 as a raw 12-byte struct.
  const ir::Model model = format::ReadModel(FixtureModel("selfie_segmentation.tflite"));
  int found = 0;
  for (const ir::Op& op : model.main().ops) {
    if (op.custom_code != "Convolution2DTransposeBias") continue;
    ++found;
    EXPECT_EQ(op.custom_options, (std::vector<uint8_t>{1, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0}));
    const auto o = ir::DecodeMediaPipeTransposeConvOptions(op.custom_options);
    EXPECT_EQ(o.padding, tfl::Padding_SAME);
    EXPECT_EQ(o.stride_w, 2);
    EXPECT_EQ(o.stride_h, 2);
  }
  EXPECT_EQ(found, 1);
}

TEST(Convolution2DTransposeBias, HandComputed) {
  // 2x2 stride 2 SAME on an even map: every input value scales its 2x2
  // block by the kernel, plus the bias.
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 2, 2, 1});
  b.Output(b.Convolution2DTransposeBias(x, b.ConstF32("w", {1, 2, 2, 1}, {1, 2, 3, 4}), b.ConstF32("b", {1}, {10}),
                                        tfl::Padding_SAME, 2, 2));
  ExpectOursAllIsas(b.Finish(), {F32({1, 2, 2, 1}, {1, -1, 2, 0.5f})}, 0,
                    {11, 12, 9, 8, 13, 14, 7, 6, 12, 14, 10.5f, 11, 16, 18, 11.5f, 12});
}

}  // namespace
}  // namespace gpuclean::testing::convt
