// ctest-labels: litert
// REDUCE_MAX against LiteRT.js: axis sets, keep_dims, negative values, int32.
#include "exec/shape_test_util.h"

namespace gpuclean::testing {
namespace {

TEST(ReduceMax, FloatAxisCombinations) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {2, 5, 4, 3});
  b.Output(b.ReduceMax(x, {1, 2}, true));
  b.Output(b.ReduceMax(x, {-1}, false));
  b.Output(b.ReduceMax(x, {0, 2}, false));
  b.Output(b.ReduceMax(x, {1, -3}, true));
  b.Output(b.ReduceMax(x, {0, 1, 2, 3}, false));
  b.Output(b.ReduceMax(x, {0}, true));
  const ir::Model model = b.Finish();
  const std::vector<npy::Array> inputs = {RandomF32({2, 5, 4, 3}, 21, -5.0f, -1.0f)};
  ExpectMatchesLiteRt(model, inputs);
  ExpectThreadsAgree(model, inputs);
}

TEST(ReduceMax, Int32AndOddShapes) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_INT32, {3, 1, 9});
  const int y = b.Input("y", tfl::TensorType_FLOAT32, {1, 37});
  b.Output(b.ReduceMax(x, {2}, false));
  b.Output(b.ReduceMax(x, {0, 1}, true));
  b.Output(b.ReduceMax(y, {1}, false));
  b.Output(b.ReduceMax(y, {0}, false));
  const ir::Model model = b.Finish();
  ExpectMatchesLiteRt(model, {RandomI32({3, 1, 9}, 22, -50, 50), RandomF32({1, 37}, 23)});
}

// A whole tensor is folded in 16 lanes: the result is the element-order
// fold's, NaN included (NaN never wins, except at element 0, where the fold
// starts), on a tensor long enough for every lane and a tail.
TEST(ReduceMax, AWholeTensorFoldsAsInElementOrder) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {75});
  b.Output(b.ReduceMax(x, {0}, false));
  b.Output(b.ReduceMin(x, {0}, false));
  const ir::Model model = b.Finish();
  std::vector<float> v = ValuesOf<float>(RandomF32({75}, 24, -3.0f, 3.0f));
  v[1] = v[17] = v[40] = NAN;
  v[33] = 7.0f;
  v[74] = -9.0f;
  const auto with = [&](const std::vector<float>& values) { return RunOurs(model, {F32({75}, values)}); };
  std::vector<npy::Array> got = with(v);
  EXPECT_EQ(ValuesOf<float>(got[0]), std::vector<float>{7.0f});
  EXPECT_EQ(ValuesOf<float>(got[1]), std::vector<float>{-9.0f});
  // LiteRT's own NaN rule differs (its min of this tensor is NaN): the
  // tensor without its NaNs.
  std::vector<float> finite = v;
  finite[1] = finite[17] = finite[40] = 0.5f;
  ExpectMatchesLiteRt(model, {F32({75}, finite)});
  v[0] = NAN;
  got = with(v);
  EXPECT_TRUE(std::isnan(ValuesOf<float>(got[0])[0]));
  EXPECT_TRUE(std::isnan(ValuesOf<float>(got[1])[0]));
}

}  // namespace
}  // namespace gpuclean::testing
