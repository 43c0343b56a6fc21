// ctest-labels: litert
// BATCH_MATMUL against LiteRT.js on every SIMD path: adj_x / adj_y, batch
// broadcasting between ranks 2..5, a shared right-hand side, single rows.
#include "exec/conv_test_util.h"

namespace gpuclean::testing::convt {
namespace {

TEST(BatchMatMul, AdjointsAndBroadcasting) {
  GraphBuilder b;
  const int a = b.Input("a", tfl::TensorType_FLOAT32, {2, 3, 5, 4});
  const int bb = b.Input("b", tfl::TensorType_FLOAT32, {2, 3, 4, 6});
  const int at = b.Input("at", tfl::TensorType_FLOAT32, {2, 3, 4, 5});
  const int bt = b.Input("bt", tfl::TensorType_FLOAT32, {2, 3, 6, 4});
  const int shared = b.Input("shared", tfl::TensorType_FLOAT32, {4, 6});
  const int bcast = b.Input("bcast", tfl::TensorType_FLOAT32, {3, 1, 5, 4});
  const int five = b.Input("five", tfl::TensorType_FLOAT32, {2, 1, 3, 5, 4});
  const int b2 = b.Input("b2", tfl::TensorType_FLOAT32, {1, 2, 4, 6});
  b.Output(b.BatchMatMul(a, bb));
  b.Output(b.BatchMatMul(at, bb, /*adj_x=*/true, false));
  b.Output(b.BatchMatMul(a, bt, false, /*adj_y=*/true));
  b.Output(b.BatchMatMul(at, bt, true, true));
  b.Output(b.BatchMatMul(a, shared));
  b.Output(b.BatchMatMul(bcast, b2));  // batch [3,1] x [1,2] -> [3,2]
  b.Output(b.BatchMatMul(five, bb));
  b.Output(b.BatchMatMul(shared, bt, true, true));
  ExpectMatchesLiteRtAllIsas(
      b.Finish(),
      {RandomF32({2, 3, 5, 4}, 1), RandomF32({2, 3, 4, 6}, 2), RandomF32({2, 3, 4, 5}, 3), RandomF32({2, 3, 6, 4}, 4),
       RandomF32({4, 6}, 5), RandomF32({3, 1, 5, 4}, 6), RandomF32({2, 1, 3, 5, 4}, 7), RandomF32({1, 2, 4, 6}, 8)});
}

TEST(BatchMatMul, SingleRowsAndLargerMatrices) {
  GraphBuilder b;
  const int q = b.Input("q", tfl::TensorType_FLOAT32, {4, 1, 64});
  const int k = b.Input("k", tfl::TensorType_FLOAT32, {4, 50, 64});
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {3, 70, 90});
  const int y = b.Input("y", tfl::TensorType_FLOAT32, {90, 45});
  b.Output(b.BatchMatMul(q, k, false, /*adj_y=*/true));
  b.Output(b.BatchMatMul(x, y));
  ExpectMatchesLiteRtAllIsas(b.Finish(), {RandomF32({4, 1, 64}, 1), RandomF32({4, 50, 64}, 2),
                                          RandomF32({3, 70, 90}, 3), RandomF32({90, 45}, 4)});
}

TEST(BatchMatMul, HandComputed) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {2, 2});
  const int y = b.Input("y", tfl::TensorType_FLOAT32, {2, 2});
  b.Output(b.BatchMatMul(x, y));
  b.Output(b.BatchMatMul(x, y, true, false));
  const ir::Model model = b.Finish();
  const std::vector<npy::Array> in = {F32({2, 2}, {1, 2, 3, 4}), F32({2, 2}, {5, 6, 7, 8})};
  ExpectOursAllIsas(model, in, 0, {19, 22, 43, 50});
  ExpectOursAllIsas(model, in, 1, {26, 30, 38, 44});
}

}  // namespace
}  // namespace gpuclean::testing::convt
