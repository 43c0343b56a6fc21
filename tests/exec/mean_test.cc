// ctest-labels: litert
// MEAN against LiteRT.js: axis sets (negative, repeated, all), keep_dims,
// the 4-D spatial special case, odd and size-1 shapes, int32 truncation.
#include "exec/shape_test_util.h"

namespace gpuclean::testing {
namespace {

TEST(Mean, FloatAxisCombinations) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {2, 5, 7, 3});
  b.Output(b.Mean(x, {1, 2}, true));  // LiteRT's 4-D spatial path
  b.Output(b.Mean(x, {2, 1}, false));
  b.Output(b.Mean(x, {-1}, false));
  b.Output(b.Mean(x, {0, 2, -1}, true));
  b.Output(b.Mean(x, {1, -3}, false));  // the same axis twice
  b.Output(b.Mean(x, {0, 1, 2, 3}, false));
  b.Output(b.Mean(x, {0}, true));
  const ir::Model model = b.Finish();
  const std::vector<npy::Array> inputs = {RandomF32({2, 5, 7, 3}, 1, -2.0f, 3.0f)};
  ExpectMatchesLiteRt(model, inputs);
  ExpectThreadsAgree(model, inputs);
}

TEST(Mean, OddAndUnitShapes) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 1, 1});
  const int y = b.Input("y", tfl::TensorType_FLOAT32, {13});
  const int z = b.Input("z", tfl::TensorType_FLOAT32, {3, 1, 257});
  b.Output(b.Mean(x, {1}, false));
  b.Output(b.Mean(y, {0}, true));
  b.Output(b.Mean(z, {1}, true));
  b.Output(b.Mean(z, {0, 2}, false));
  const ir::Model model = b.Finish();
  ExpectMatchesLiteRt(model, {RandomF32({1, 1, 1}, 2), RandomF32({13}, 3), RandomF32({3, 1, 257}, 4)});
}

TEST(Mean, Int32TruncatesTowardZero) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_INT32, {3, 4});
  b.Output(b.Mean(x, {1}, false));
  b.Output(b.Mean(x, {0}, true));
  const ir::Model model = b.Finish();
  const npy::Array in = I32({3, 4}, {1, 2, 2, 2, -1, -2, -2, -2, 7, -9, 5, 0});
  ExpectMatchesLiteRt(model, {in});
  // Row sums 7, -7, 3 over 4: 1, -1, 0 (C++ division, not floor).
  EXPECT_EQ(ValuesOf<int32_t>(RunOurs(model, {in})[0]), (std::vector<int32_t>{1, -1, 0}));
}

TEST(Mean, LargeReductionWithThreads) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {4, 96, 80, 24});
  b.Output(b.Mean(x, {1, 2}, true));
  b.Output(b.Mean(x, {3}, false));
  b.Output(b.Mean(x, {0, 2}, false));
  const ir::Model model = b.Finish();
  const std::vector<npy::Array> inputs = {RandomF32({4, 96, 80, 24}, 5)};
  ExpectMatchesLiteRt(model, inputs);
  ExpectThreadsAgree(model, inputs, 4);
}

TEST(Mean, RejectsUnsupportedDtype) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_INT8, {2, 3});
  b.Output(b.Mean(x, {1}, false));
  ExpectInterpreterRefuses(b.Finish());
}

}  // namespace
}  // namespace gpuclean::testing
