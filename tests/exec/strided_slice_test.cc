// ctest-labels: litert
// STRIDED_SLICE against LiteRT.js: strides > 1, negative strides and
// indices, begin/end masks, ellipsis, new_axis, shrink_axis, the offset
// option, int32 and bool data.
#include "exec/shape_test_util.h"

namespace gpuclean::testing {
namespace {

using builder::StridedSliceMasks;

TEST(StridedSlice, StridesAndMasks) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {4, 6, 5});
  b.Output(b.StridedSlice(x, {0, 1, 0}, {4, 6, 5}, {2, 2, 1}));
  b.Output(b.StridedSlice(x, {3, 5, 4}, {0, 0, 0}, {-1, -2, -1}));
  b.Output(b.StridedSlice(x, {-1, -1, -1}, {-5, -7, -6}, {-1, -1, -2}));
  b.Output(b.StridedSlice(x, {1, 2, 3}, {3, 4, 4}, {1, 1, 1}, StridedSliceMasks{.begin = 0b101, .end = 0b010}));
  b.Output(b.StridedSlice(x, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}, StridedSliceMasks{.begin = 0b111, .end = 0b111}));
  b.Output(b.StridedSlice(x, {1, 0, 2}, {2, 6, 3}, {1, 3, 1}, StridedSliceMasks{.shrink_axis = 0b101}));
  b.Output(b.StridedSlice(x, {0, 1}, {0, 3}, {1, 1}, StridedSliceMasks{.ellipsis = 0b01}));
  b.Output(b.StridedSlice(x, {0, 2, 0}, {0, 4, 5}, {1, 1, 1}, StridedSliceMasks{.new_axis = 0b001}));
  b.Output(b.StridedSlice(x, {1, 0, 0}, {3, 0, 0}, {1, 1, 1}, StridedSliceMasks{.new_axis = 0b110}));
  b.Output(b.StridedSlice(x, {0, 1, 2}, {4, 3, 2}, {1, 2, 1}, StridedSliceMasks{.offset = true}));
  b.Output(b.StridedSlice(x, {10, -10, 2}, {-10, 10, 100}, {-1, 1, 1}));  // clamped
  const ir::Model model = b.Finish();
  const std::vector<npy::Array> inputs = {RandomF32({4, 6, 5}, 131)};
  ExpectMatchesLiteRt(model, inputs);
  ExpectThreadsAgree(model, inputs);
}

TEST(StridedSlice, Int32AndBool) {
  GraphBuilder b;
  const int i = b.Input("i", tfl::TensorType_INT32, {7, 3});
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {5, 4});
  b.Output(b.StridedSlice(i, {6, 0}, {0, 3}, {-2, 1}, StridedSliceMasks{.end = 0b01}));
  b.Output(AsFloat(b, b.StridedSlice(PositiveMask(b, x), {1, 3}, {5, 0}, {2, -1})));
  const ir::Model model = b.Finish();
  ExpectMatchesLiteRt(model, {RandomI32({7, 3}, 132, -9, 9), RandomF32({5, 4}, 133)});
}

// LiteRT.js cannot return an empty tensor, so the empty slice is checked here.
TEST(StridedSlice, EmptyAndHandComputed) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {2, 3});
  b.Output(b.StridedSlice(x, {1, 2}, {1, 0}, {1, 1}));
  b.Output(b.StridedSlice(x, {-1, -1}, {-3, -4}, {-1, -2}));
  b.Output(b.StridedSlice(x, {0, 1}, {1, 2}, {1, 1}, StridedSliceMasks{.shrink_axis = 0b01, .offset = true}));
  const auto out = RunOurs(b.Finish(), {F32({2, 3}, {1, 2, 3, 4, 5, 6})});
  EXPECT_EQ(out[0].shape, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(ValuesOf<float>(out[1]), (std::vector<float>{6, 4, 3, 1}));
  EXPECT_EQ(out[2].shape, (std::vector<int64_t>{2}));
  EXPECT_EQ(ValuesOf<float>(out[2]), (std::vector<float>{2, 3}));
}

}  // namespace
}  // namespace gpuclean::testing
