// ctest-labels: litert
// MAX_POOL_2D against LiteRT.js on every SIMD path: SAME/VALID, strides
// below, equal to and above the filter, windows wider than the input,
// global pooling, activations, odd channel counts, negative inputs (padding
// must never win).
#include "exec/conv_test_util.h"

namespace gpuclean::testing::convt {
namespace {

TEST(MaxPool2D, WindowsPaddingStrides) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {2, 11, 9, 19});
  b.Output(b.MaxPool2D(x, tfl::Padding_VALID, 2, 2, 2, 2));
  b.Output(b.MaxPool2D(x, tfl::Padding_SAME, 2, 2, 2, 2));
  b.Output(b.MaxPool2D(x, tfl::Padding_SAME, 1, 1, 3, 3, tfl::ActivationFunctionType_RELU));
  b.Output(b.MaxPool2D(x, tfl::Padding_SAME, 2, 3, 3, 2, tfl::ActivationFunctionType_RELU6));
  b.Output(b.MaxPool2D(x, tfl::Padding_VALID, 3, 3, 2, 2));
  b.Output(b.MaxPool2D(x, tfl::Padding_SAME, 1, 2, 1, 1));
  b.Output(b.MaxPool2D(x, tfl::Padding_VALID, 9, 11, 9, 11));
  b.Output(b.MaxPool2D(x, tfl::Padding_SAME, 1, 1, 13, 12, tfl::ActivationFunctionType_RELU_N1_TO_1));
  ExpectMatchesLiteRtAllIsas(b.Finish(), {RandomF32({2, 11, 9, 19}, 1, -3.0f, -1.0f)});
}

TEST(MaxPool2D, HandComputed) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 3, 3, 1});
  b.Output(b.MaxPool2D(x, tfl::Padding_SAME, 2, 2, 2, 2));
  ExpectOursAllIsas(b.Finish(), {F32({1, 3, 3, 1}, {-1, -5, -3, -4, -2, -6, -7, -8, -9})}, 0, {-1, -3, -7, -9});
}

}  // namespace
}  // namespace gpuclean::testing::convt
