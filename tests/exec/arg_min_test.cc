// ctest-labels: litert
// ARG_MIN against LiteRT.js: every axis (negative too), ties (first index
// wins), int32 and int64 output types (int64 cast to int32 for LiteRT.js,
// which cannot return int64), int32 input, size-1 axes.
#include "exec/shape_test_util.h"

namespace gpuclean::testing {
namespace {

TEST(ArgMin, AxesAndOutputTypes) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {3, 5, 4});
  const int t = b.Input("t", tfl::TensorType_FLOAT32, {4, 7});
  const int i = b.Input("i", tfl::TensorType_INT32, {6, 2});
  b.Output(b.ArgMin(x, 0));
  b.Output(b.ArgMin(x, 1));
  b.Output(b.ArgMin(x, -1));
  b.Output(b.Cast(b.ArgMin(x, 2, tfl::TensorType_INT64), tfl::TensorType_INT32));
  b.Output(b.ArgMin(t, 1));  // many exact ties
  b.Output(b.ArgMin(t, 0));
  b.Output(b.ArgMin(i, 0));
  b.Output(b.ArgMin(b.Reshape(t, {1, 28}), 0));  // a size-1 axis
  const ir::Model model = b.Finish();
  const std::vector<npy::Array> inputs = {RandomF32({3, 5, 4}, 261), TiedF32({4, 7}, 262, 0, 2),
                                          RandomI32({6, 2}, 263, -3, 3)};
  ExpectMatchesLiteRt(model, inputs);
  ExpectThreadsAgree(model, inputs);
}

TEST(ArgMin, Int64OutputHandComputed) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {2, 4});
  b.Output(b.ArgMin(x, 1, tfl::TensorType_INT64));
  const auto out = RunOurs(b.Finish(), {F32({2, 4}, {5, 9, 9, 5, -1, -1, -7, -7})});
  ASSERT_EQ(out[0].dtype, tfl::TensorType_INT64);
  EXPECT_EQ(ValuesOf<int64_t>(out[0]), (std::vector<int64_t>{0, 2}));
}

}  // namespace
}  // namespace gpuclean::testing
