// ctest-labels: litert
// CONCATENATION against LiteRT.js: every axis (negative too), three inputs of
// different extents, size-1 pieces, int32 and bool data; the fused activation
// checked against hand-computed values.
#include "exec/shape_test_util.h"

namespace gpuclean::testing {
namespace {

TEST(Concatenation, AxesAndExtents) {
  GraphBuilder b;
  const int a = b.Input("a", tfl::TensorType_FLOAT32, {2, 3, 4});
  const int c = b.Input("c", tfl::TensorType_FLOAT32, {2, 3, 1});
  const int d = b.Input("d", tfl::TensorType_FLOAT32, {2, 3, 5});
  const int e = b.Input("e", tfl::TensorType_FLOAT32, {1, 3, 4});
  const int f = b.Input("f", tfl::TensorType_FLOAT32, {2, 2, 4});
  b.Output(b.Concatenation({a, c, d}, 2));
  b.Output(b.Concatenation({a, c, d}, -1));
  b.Output(b.Concatenation({a, e, a}, 0));
  b.Output(b.Concatenation({f, a}, -2));
  b.Output(b.Concatenation({a}, 1));
  const ir::Model model = b.Finish();
  const std::vector<npy::Array> inputs = {RandomF32({2, 3, 4}, 111), RandomF32({2, 3, 1}, 112),
                                          RandomF32({2, 3, 5}, 113), RandomF32({1, 3, 4}, 114),
                                          RandomF32({2, 2, 4}, 115)};
  ExpectMatchesLiteRt(model, inputs);
  ExpectThreadsAgree(model, inputs);
}

TEST(Concatenation, Int32AndBool) {
  GraphBuilder b;
  const int i = b.Input("i", tfl::TensorType_INT32, {3, 2});
  const int j = b.Input("j", tfl::TensorType_INT32, {3, 5});
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {4, 3});
  b.Output(b.Concatenation({i, j, i}, 1));
  const int m = PositiveMask(b, x);
  b.Output(AsFloat(b, b.Concatenation({m, m}, 0)));
  const ir::Model model = b.Finish();
  ExpectMatchesLiteRt(model, {RandomI32({3, 2}, 116, -9, 9), RandomI32({3, 5}, 117, -9, 9), RandomF32({4, 3}, 118)});
}

TEST(Concatenation, FusedActivation) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 3});
  const int y = b.Input("y", tfl::TensorType_FLOAT32, {1, 2});
  b.Output(b.Concatenation({x, y}, 1, tfl::ActivationFunctionType_RELU6));
  b.Output(b.Concatenation({x, y}, -1, tfl::ActivationFunctionType_RELU));
  const auto out = RunOurs(b.Finish(), {F32({1, 3}, {-1, 3, 7}), F32({1, 2}, {0.5f, 9})});
  EXPECT_EQ(ValuesOf<float>(out[0]), (std::vector<float>{0, 3, 6, 0.5f, 6}));
  EXPECT_EQ(ValuesOf<float>(out[1]), (std::vector<float>{0, 3, 7, 0.5f, 9}));
}

}  // namespace
}  // namespace gpuclean::testing
