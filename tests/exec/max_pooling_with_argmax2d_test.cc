// ctest-labels: litert
// MaxPoolingWithArgmax2D (MediaPipe custom op).
//
// LiteRT.js runs it through XNNPACK, which accepts only filter == stride and
// writes the argmax as raw uint32 bits (window_x * filter_h + window_y) into
// the float32 index tensor, so its index output reads as denormals. We keep
// MediaPipe's documented encoding (max_pool_argmax.cc): the float value
// window_y * filter_w + window_x + 0.1 - the one a GPU and MediaPipe's
// unpooling read back. So: values against LiteRT.js; indices by hand; and the
// pool -> unpool round trip against LiteRT.js (max_unpooling2d_test.cc).
#include "exec/conv_test_util.h"

namespace gpuclean::testing::convt {
namespace {

TEST(MaxPoolingWithArgmax2D, ValuesMatchLiteRt) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {2, 8, 6, 5});
  const int odd = b.Input("odd", tfl::TensorType_FLOAT32, {1, 5, 7, 3});
  b.Output(b.MaxPoolingWithArgmax2D(x, tfl::Padding_VALID, 2, 2, 2, 2).first);
  b.Output(b.MaxPoolingWithArgmax2D(x, tfl::Padding_SAME, 3, 3, 3, 3).first);
  b.Output(b.MaxPoolingWithArgmax2D(odd, tfl::Padding_SAME, 2, 2, 2, 2).first);
  b.Output(b.MaxPoolingWithArgmax2D(odd, tfl::Padding_VALID, 3, 2, 3, 2).first);
  ExpectMatchesLiteRtAllIsas(b.Finish(), {RandomF32({2, 8, 6, 5}, 1, -2.0f, -1.0f), RandomF32({1, 5, 7, 3}, 2)});
}

TEST(MaxPoolingWithArgmax2D, HandComputedIndices) {
  // 4x4 single channel, 2x2 windows: maxima at window (0,1), (1,0), (1,0), (1,1).
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 4, 4, 1});
  const auto [values, indices] = b.MaxPoolingWithArgmax2D(x, tfl::Padding_VALID, 2, 2, 2, 2);
  b.Output(values);
  b.Output(indices);
  const ir::Model model = b.Finish();
  const std::vector<npy::Array> in = {F32({1, 4, 4, 1}, {1, 9, 2, 0,  //
                                                         3, 4, 8, 1,  //
                                                         0, 1, 5, 6,  //
                                                         7, 2, 6, 9})};
  ExpectOursAllIsas(model, in, 0, {9, 8, 7, 9});
  ExpectOursAllIsas(model, in, 1, {1.1f, 2.1f, 2.1f, 3.1f});
}

TEST(MaxPoolingWithArgmax2D, HandComputedTiesAndClippedWindows) {
  // SAME 2x2 stride 2 on 3x3: the last row/column windows are clipped to the
  // input; ties keep the first maximum in row-major window order.
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 3, 3, 1});
  b.Output(b.MaxPoolingWithArgmax2D(x, tfl::Padding_SAME, 2, 2, 2, 2).second);
  ExpectOursAllIsas(b.Finish(), {F32({1, 3, 3, 1}, {5, 5, 1, 5, 5, 2, 0, 3, 3})}, 0, {0.1f, 2.1f, 1.1f, 0.1f});
}

}  // namespace
}  // namespace gpuclean::testing::convt
