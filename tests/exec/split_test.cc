// ctest-labels: litert
// SPLIT against LiteRT.js: every axis (negative too), one piece, int32 and bool.
#include "exec/shape_test_util.h"

namespace gpuclean::testing {
namespace {

TEST(Split, AxesAndCounts) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {4, 6, 3});
  const int i = b.Input("i", tfl::TensorType_INT32, {2, 9});
  for (int out : b.Split(x, 0, 2)) b.Output(out);
  for (int out : b.Split(x, 1, 3)) b.Output(out);
  for (int out : b.Split(x, -1, 3)) b.Output(out);
  for (int out : b.Split(x, 2, 1)) b.Output(out);
  for (int out : b.Split(i, 1, 3)) b.Output(out);
  const ir::Model model = b.Finish();
  const std::vector<npy::Array> inputs = {RandomF32({4, 6, 3}, 171), RandomI32({2, 9}, 172, -9, 9)};
  ExpectMatchesLiteRt(model, inputs);
  ExpectThreadsAgree(model, inputs);
}

// LiteRT's SPLIT refuses bool (split.cc accepts float32, (u)int8, int16,
// int32, int64); ours moves any element type, checked by hand.
TEST(Split, BoolByHand) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {2, 4});
  for (int out : b.Split(PositiveMask(b, x), -1, 2)) b.Output(AsFloat(b, out));
  const auto out = RunOurs(b.Finish(), {F32({2, 4}, {1, -1, 2, -2, -3, 3, 0, 4})});
  EXPECT_EQ(ValuesOf<float>(out[0]), (std::vector<float>{1, 0, 0, 1}));
  EXPECT_EQ(ValuesOf<float>(out[1]), (std::vector<float>{1, 0, 0, 1}));
}

}  // namespace
}  // namespace gpuclean::testing
