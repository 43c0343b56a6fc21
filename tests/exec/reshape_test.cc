// ctest-labels: litert
// RESHAPE against LiteRT.js: -1 dims, rank changes, int32 and bool data.
#include "exec/shape_test_util.h"

namespace gpuclean::testing {
namespace {

TEST(Reshape, FloatInt32Bool) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {2, 3, 4});
  const int i = b.Input("i", tfl::TensorType_INT32, {6, 5});
  b.Output(b.Reshape(x, {4, -1}));
  b.Output(b.Reshape(x, {1, 24, 1}));
  b.Output(b.Reshape(i, {-1}));
  b.Output(b.Reshape(i, {3, 2, 5}));
  b.Output(AsFloat(b, b.Reshape(PositiveMask(b, x), {6, 4})));
  const ir::Model model = b.Finish();
  ExpectMatchesLiteRt(model, {RandomF32({2, 3, 4}, 71), RandomI32({6, 5}, 72, -9, 9)});
}

TEST(Reshape, KeepsBytes) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_INT32, {2, 2});
  b.Output(b.Reshape(x, {4}));
  const auto out = RunOurs(b.Finish(), {I32({2, 2}, {5, -6, 7, -8})});
  EXPECT_EQ(ValuesOf<int32_t>(out[0]), (std::vector<int32_t>{5, -6, 7, -8}));
  EXPECT_EQ(out[0].shape, (std::vector<int64_t>{4}));
}

}  // namespace
}  // namespace gpuclean::testing
