// ctest-labels: litert
// PACK against LiteRT.js: every axis including the new last one and negative
// axes, one input, int32 and bool data.
#include "exec/shape_test_util.h"

namespace gpuclean::testing {
namespace {

TEST(Pack, Axes) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {3, 4});
  const int y = b.Input("y", tfl::TensorType_FLOAT32, {3, 4});
  const int z = b.Input("z", tfl::TensorType_FLOAT32, {3, 4});
  const int i = b.Input("i", tfl::TensorType_INT32, {5});
  b.Output(b.Pack({x, y, z}, 0));
  b.Output(b.Pack({x, y, z}, 1));
  b.Output(b.Pack({x, y}, 2));
  b.Output(b.Pack({x, y, z}, -1));
  b.Output(b.Pack({z}, -3));
  b.Output(b.Pack({i, i}, 1));
  const ir::Model model = b.Finish();
  const std::vector<npy::Array> inputs = {RandomF32({3, 4}, 191), RandomF32({3, 4}, 192), RandomF32({3, 4}, 193),
                                          RandomI32({5}, 194, -9, 9)};
  ExpectMatchesLiteRt(model, inputs);
}

// LiteRT's PACK refuses bool ("Type 'BOOL' is not supported by pack"); ours
// moves any element type, checked by hand.
TEST(Pack, BoolByHand) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {3});
  const int y = b.Input("y", tfl::TensorType_FLOAT32, {3});
  b.Output(AsFloat(b, b.Pack({PositiveMask(b, x), PositiveMask(b, y)}, 1)));
  const auto out = RunOurs(b.Finish(), {F32({3}, {1, -1, 2}), F32({3}, {-5, 5, 0})});
  EXPECT_EQ(out[0].shape, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(ValuesOf<float>(out[0]), (std::vector<float>{1, 0, 0, 1, 1, 0}));
}

}  // namespace
}  // namespace gpuclean::testing
