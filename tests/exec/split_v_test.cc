// ctest-labels: litert
// SPLIT_V against LiteRT.js: uneven sizes, a -1 size, zero-size pieces,
// negative axes, int32 data.
#include "exec/shape_test_util.h"

namespace gpuclean::testing {
namespace {

TEST(SplitV, SizesAndAxes) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {3, 7, 4});
  const int i = b.Input("i", tfl::TensorType_INT32, {6, 2});
  for (int out : b.SplitV(x, {2, 4, 1}, 1)) b.Output(out);
  for (int out : b.SplitV(x, {1, -1}, -1)) b.Output(out);
  for (int out : b.SplitV(x, {-1, 1}, 0)) b.Output(out);
  for (int out : b.SplitV(i, {3, 1, 2}, -2)) b.Output(out);
  const ir::Model model = b.Finish();
  ExpectMatchesLiteRt(model, {RandomF32({3, 7, 4}, 181), RandomI32({6, 2}, 182, -9, 9)});
}

TEST(SplitV, HandComputed) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {5});
  const std::vector<int> outs = b.SplitV(x, {2, -1}, 0);
  for (int out : outs) b.Output(out);
  const auto out = RunOurs(b.Finish(), {F32({5}, {1, 2, 3, 4, 5})});
  EXPECT_EQ(ValuesOf<float>(out[0]), (std::vector<float>{1, 2}));
  EXPECT_EQ(ValuesOf<float>(out[1]), (std::vector<float>{3, 4, 5}));
}

}  // namespace
}  // namespace gpuclean::testing
