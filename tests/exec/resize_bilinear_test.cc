// ctest-labels: litert
// RESIZE_BILINEAR against LiteRT.js on every SIMD path: the four
// align_corners / half_pixel_centers combinations, up and down, integer and
// fractional ratios, a 1-pixel output, the MediaPipe 2x upsampling.
#include "exec/conv_test_util.h"

namespace gpuclean::testing::convt {
namespace {

TEST(ResizeBilinear, ModesAndRatios) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {2, 5, 7, 19});
  for (auto [align, half] : {std::pair{false, false}, std::pair{true, false}, std::pair{false, true}}) {
    b.Output(b.ResizeBilinear(x, 10, 14, align, half));
    b.Output(b.ResizeBilinear(x, 13, 9, align, half));
    b.Output(b.ResizeBilinear(x, 3, 4, align, half));
    b.Output(b.ResizeBilinear(x, 1, 1, align, half));
    b.Output(b.ResizeBilinear(x, 5, 7, align, half));
  }
  ExpectMatchesLiteRtAllIsas(b.Finish(), {RandomF32({2, 5, 7, 19}, 1)});
}

TEST(ResizeBilinear, HandComputedHalfPixelCenters) {
  // 2 -> 4 with half-pixel centres samples at -0.25, 0.25, 0.75, 1.25.
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 1, 2, 1});
  b.Output(b.ResizeBilinear(x, 1, 4, false, true));
  ExpectOursAllIsas(b.Finish(), {F32({1, 1, 2, 1}, {0, 4})}, 0, {0, 1, 3, 4});
}

// Both flags: TFLite's builtin kernel refuses the op, but LiteRT.js (its
// XNNPACK CPU path) aligns the corners and ignores half_pixel_centers.
TEST(ResizeBilinear, BothAlignFlagsAlignTheCornersAsLiteRtDoes) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 5, 7, 3});
  b.Output(b.ResizeBilinear(x, 10, 14, true, true));
  b.Output(b.ResizeBilinear(x, 3, 4, true, true));
  ExpectMatchesLiteRtAllIsas(b.Finish(), {RandomF32({1, 5, 7, 3}, 2)});
}

}  // namespace
}  // namespace gpuclean::testing::convt
