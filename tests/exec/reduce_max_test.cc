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

}  // namespace
}  // namespace gpuclean::testing
