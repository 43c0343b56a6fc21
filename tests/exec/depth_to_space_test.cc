// ctest-labels: litert
// DEPTH_TO_SPACE against LiteRT.js: block sizes 2 and 3, batches, float32 and int32
// (it only moves elements), plus the element order checked by hand.
#include "exec/conv_test_util.h"

namespace gpuclean::testing::convt {
namespace {

npy::Array IotaDepthToSpace(ir::DType dtype, const Shape& shape) {
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

TEST(DepthToSpace, BlockSizesBatchesAndTypes) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 3, 4, 8});
  const int y = b.Input("y", tfl::TensorType_FLOAT32, {2, 2, 3, 27});
  const int z = b.Input("z", tfl::TensorType_INT32, {1, 3, 4, 8});
  b.Output(b.DepthToSpace(x, 2));
  b.Output(b.DepthToSpace(y, 3));
  b.Output(b.DepthToSpace(z, 2));
  ExpectMatchesLiteRtAllIsas(b.Finish(), {RandomF32({1, 3, 4, 8}, 1), RandomF32({2, 2, 3, 27}, 2),
                                          IotaDepthToSpace(tfl::TensorType_INT32, {1, 3, 4, 8})});
}

TEST(DepthToSpace, HandComputedOrder) {
  // Two pixels of depth 8, block 2: out[dy, 2x + dx, c] = in[x, (2dy + dx)*2 + c].
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 1, 2, 8});
  b.Output(b.DepthToSpace(x, 2));
  ExpectOursAllIsas(b.Finish(), {IotaDepthToSpace(tfl::TensorType_FLOAT32, {1, 1, 2, 8})}, 0,
                    {0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 12, 13, 14, 15});
}

}  // namespace
}  // namespace gpuclean::testing::convt
