// ctest-labels: litert
// SPACE_TO_DEPTH against LiteRT.js: block sizes 2 and 3, batches, float32 and int32
// (it only moves elements), plus the element order checked by hand.
#include "exec/conv_test_util.h"

namespace gpuclean::testing::convt {
namespace {

npy::Array IotaSpaceToDepth(ir::DType dtype, const Shape& shape) {
  npy::Array a;
  a.dtype = dtype;
  a.shape.assign(shape.begin(), shape.end());
  a.data.resize(static_cast<size_t>(CountOf(shape)) * 4);
  for (int64_t i = 0; i < CountOf(shape); ++i) {
    if (dtype == tfl::TensorType_INT32)
      a.as<int32_t>()[i] = static_cast<int32_t>(i);
    else
      a.as<float>()[i] = static_cast<float>(i);
  }
  return a;
}

TEST(SpaceToDepth, BlockSizesBatchesAndTypes) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 6, 8, 2});
  const int y = b.Input("y", tfl::TensorType_FLOAT32, {2, 6, 9, 3});
  const int z = b.Input("z", tfl::TensorType_INT32, {1, 6, 8, 2});
  b.Output(b.SpaceToDepth(x, 2));
  b.Output(b.SpaceToDepth(y, 3));
  b.Output(b.SpaceToDepth(z, 2));
  ExpectMatchesLiteRtAllIsas(b.Finish(), {RandomF32({1, 6, 8, 2}, 1), RandomF32({2, 6, 9, 3}, 2),
                                          IotaSpaceToDepth(tfl::TensorType_INT32, {1, 6, 8, 2})});
}

TEST(SpaceToDepth, HandComputedOrder) {
  // 2x2 pixels of depth 1 -> one pixel of depth 4 in (dy, dx) order; a 2x4
  // map puts columns 0-1 and 2-3 into two pixels.
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 2, 4, 1});
  b.Output(b.SpaceToDepth(x, 2));
  ExpectOursAllIsas(b.Finish(), {IotaSpaceToDepth(tfl::TensorType_FLOAT32, {1, 2, 4, 1})}, 0, {0, 1, 4, 5, 2, 3, 6, 7});
}

}  // namespace
}  // namespace gpuclean::testing::convt
