// ctest-labels: litert
// RESIZE_NEAREST_NEIGHBOR against LiteRT.js: the three legal align_corners /
// half_pixel_centers combinations with their rounding rules (floor, round
// half away from zero, clamps), up and down, fractional ratios, int32 data.
#include "exec/conv_test_util.h"

namespace gpuclean::testing::convt {
namespace {

TEST(ResizeNearestNeighbor, ModesAndRatios) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {2, 5, 7, 3});
  const int n = b.Input("n", tfl::TensorType_INT32, {1, 4, 6, 2});
  for (auto [align, half] : {std::pair{false, false}, std::pair{true, false}, std::pair{false, true}}) {
    for (auto [h, w] : {std::pair{10, 14}, std::pair{13, 9}, std::pair{3, 4}, std::pair{1, 1}, std::pair{7, 17}})
      b.Output(b.ResizeNearestNeighbor(x, h, w, align, half));
    b.Output(b.ResizeNearestNeighbor(n, 9, 5, align, half));
  }
  npy::Array ints;
  ints.dtype = tfl::TensorType_INT32;
  ints.shape = {1, 4, 6, 2};
  ints.data.resize(48 * 4);
  for (int i = 0; i < 48; ++i) ints.as<int32_t>()[i] = i * 7 - 100;
  ExpectMatchesLiteRtAllIsas(b.Finish(), {RandomF32({2, 5, 7, 3}, 1), ints});
}

TEST(ResizeNearestNeighbor, HandComputedRounding) {
  // 3 -> 5: scale 0.6. floor: 0,0,1,1,2. align_corners (scale 0.5, round
  // half away from zero): 0,1,1,2,2. half_pixel: floor((i+0.5)*0.6): 0,0,1,2,2.
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 1, 3, 1});
  b.Output(b.ResizeNearestNeighbor(x, 1, 5, false, false));
  b.Output(b.ResizeNearestNeighbor(x, 1, 5, true, false));
  b.Output(b.ResizeNearestNeighbor(x, 1, 5, false, true));
  const ir::Model model = b.Finish();
  const std::vector<npy::Array> in = {F32({1, 1, 3, 1}, {10, 20, 30})};
  ExpectOursAllIsas(model, in, 0, {10, 10, 20, 20, 30});
  ExpectOursAllIsas(model, in, 1, {10, 20, 20, 30, 30});
  ExpectOursAllIsas(model, in, 2, {10, 10, 20, 30, 30});
}

}  // namespace
}  // namespace gpuclean::testing::convt
