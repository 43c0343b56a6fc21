// ctest-labels: litert
// MaxUnpooling2D (MediaPipe custom op).
//
// LiteRT.js (XNNPACK) reads the index tensor as raw uint32 bits, the encoding
// its own MaxPoolingWithArgmax2D writes; we read MediaPipe's float encoding
// (see max_pooling_with_argmax2d_test.cc). Each runtime is consistent with
// itself, so the pool -> unpool round trip is compared against LiteRT.js (on
// inputs without ties, where the two window orders agree), and index
// decoding is checked by hand.
#include "exec/conv_test_util.h"

namespace gpuclean::testing::convt {
namespace {

TEST(MaxUnpooling2D, RoundTripMatchesLiteRt) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {2, 8, 6, 5});
  const int y = b.Input("y", tfl::TensorType_FLOAT32, {1, 9, 6, 3});
  const auto [v1, i1] = b.MaxPoolingWithArgmax2D(x, tfl::Padding_VALID, 2, 2, 2, 2);
  b.Output(b.MaxUnpooling2D(v1, i1, tfl::Padding_VALID, 2, 2, 2, 2));
  const auto [v2, i2] = b.MaxPoolingWithArgmax2D(y, tfl::Padding_VALID, 3, 3, 3, 3);
  b.Output(b.MaxUnpooling2D(v2, i2, tfl::Padding_VALID, 3, 3, 3, 3));
  const auto [v3, i3] = b.MaxPoolingWithArgmax2D(y, tfl::Padding_VALID, 2, 3, 2, 3);
  b.Output(b.MaxUnpooling2D(v3, i3, tfl::Padding_VALID, 2, 3, 2, 3));
  ExpectMatchesLiteRtAllIsas(b.Finish(), {RandomF32({2, 8, 6, 5}, 1), RandomF32({1, 9, 6, 3}, 2)});
}

TEST(MaxUnpooling2D, HandComputedScatter) {
  // 2x2 windows; index k goes to (k / 2, k % 2) of its window, the rest is 0.
  GraphBuilder b;
  const int v = b.Input("v", tfl::TensorType_FLOAT32, {1, 1, 2, 2});
  const int i = b.Input("i", tfl::TensorType_FLOAT32, {1, 1, 2, 2});
  b.Output(b.MaxUnpooling2D(v, i, tfl::Padding_VALID, 2, 2, 2, 2));
  // Channel 0 values 1, 2 at indices 3, 0; channel 1 values 3, 4 at 1.1, 2.1.
  ExpectOursAllIsas(b.Finish(), {F32({1, 1, 2, 2}, {1, 3, 2, 4}), F32({1, 1, 2, 2}, {3, 1.1f, 0, 2.1f})}, 0,
                    {0, 0, 0, 3, 2, 0, 0, 0,  //
                     0, 0, 1, 0, 0, 4, 0, 0});
}

}  // namespace
}  // namespace gpuclean::testing::convt
