// ctest-labels: litert
// AVERAGE_POOL_2D against LiteRT.js on every SIMD path: SAME windows at the
// border average only their in-bounds elements; VALID, strides, global
// pooling (the MediaPipe squeeze-excite pattern), activations.
#include "exec/conv_test_util.h"

namespace gpuclean::testing::convt {
namespace {

TEST(AveragePool2D, WindowsPaddingStrides) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {2, 11, 9, 19});
  b.Output(b.AveragePool2D(x, tfl::Padding_VALID, 2, 2, 2, 2));
  b.Output(b.AveragePool2D(x, tfl::Padding_SAME, 2, 2, 2, 2));
  b.Output(b.AveragePool2D(x, tfl::Padding_SAME, 1, 1, 3, 3, tfl::ActivationFunctionType_RELU));
  b.Output(b.AveragePool2D(x, tfl::Padding_SAME, 2, 3, 3, 2, tfl::ActivationFunctionType_RELU6));
  b.Output(b.AveragePool2D(x, tfl::Padding_VALID, 3, 3, 2, 2));
  b.Output(b.AveragePool2D(x, tfl::Padding_SAME, 1, 2, 1, 1));
  b.Output(b.AveragePool2D(x, tfl::Padding_VALID, 9, 11, 9, 11));
  b.Output(b.AveragePool2D(x, tfl::Padding_SAME, 1, 1, 13, 12, tfl::ActivationFunctionType_RELU_N1_TO_1));
  ExpectMatchesLiteRtAllIsas(b.Finish(), {RandomF32({2, 11, 9, 19}, 1, -1.0f, 3.0f)});
}

TEST(AveragePool2D, GlobalPoolingOfLargeMaps) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 64, 64, 16});
  b.Output(b.AveragePool2D(x, tfl::Padding_VALID, 64, 64, 64, 64));
  ExpectMatchesLiteRtAllIsas(b.Finish(), {RandomF32({1, 64, 64, 16}, 2, 0.0f, 1.0f)});
}

TEST(AveragePool2D, HandComputedBorderCountsOnlyValidElements) {
  // 2x2 SAME stride 2 over 3x3: the right and bottom windows hold 2 and 1
  // real elements.
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 3, 3, 1});
  b.Output(b.AveragePool2D(x, tfl::Padding_SAME, 2, 2, 2, 2));
  ExpectOursAllIsas(b.Finish(), {F32({1, 3, 3, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9})}, 0, {3.0f, 4.5f, 7.5f, 9.0f});
}

}  // namespace
}  // namespace gpuclean::testing::convt
