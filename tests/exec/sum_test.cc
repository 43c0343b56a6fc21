// ctest-labels: litert
// SUM against LiteRT.js: axis sets, keep_dims, all-axes, int32.
#include "exec/shape_test_util.h"

namespace gpuclean::testing {
namespace {

TEST(Sum, FloatAxisCombinations) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {3, 4, 5, 6});
  b.Output(b.Sum(x, {1, 2}, true));
  b.Output(b.Sum(x, {-1}, false));
  b.Output(b.Sum(x, {0, -2}, false));
  b.Output(b.Sum(x, {3, 3, 0}, true));
  b.Output(b.Sum(x, {0, 1, 2, 3}, false));
  b.Output(b.Sum(x, {0, 1, 2, 3}, true));
  b.Output(b.Sum(x, {1, 3}, false));
  const ir::Model model = b.Finish();
  const std::vector<npy::Array> inputs = {RandomF32({3, 4, 5, 6}, 11)};
  ExpectMatchesLiteRt(model, inputs);
  ExpectThreadsAgree(model, inputs);
}

TEST(Sum, Int32AndUnitDims) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_INT32, {2, 1, 7});
  b.Output(b.Sum(x, {2}, false));
  b.Output(b.Sum(x, {1}, true));
  b.Output(b.Sum(x, {0, 2}, true));
  const ir::Model model = b.Finish();
  ExpectMatchesLiteRt(model, {RandomI32({2, 1, 7}, 12, -1000, 1000)});
}

TEST(Sum, HandComputed) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {2, 3});
  b.Output(b.Sum(x, {0}, false));
  b.Output(b.Sum(x, {-1}, true));
  const auto out = RunOurs(b.Finish(), {F32({2, 3}, {1, 2, 3, 10, 20, 30})});
  EXPECT_EQ(ValuesOf<float>(out[0]), (std::vector<float>{11, 22, 33}));
  EXPECT_EQ(ValuesOf<float>(out[1]), (std::vector<float>{6, 60}));
  EXPECT_EQ(out[1].shape, (std::vector<int64_t>{2, 1}));
}

}  // namespace
}  // namespace gpuclean::testing
