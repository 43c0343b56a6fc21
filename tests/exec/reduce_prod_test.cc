// ctest-labels: litert
// REDUCE_PROD against LiteRT.js: axis sets, keep_dims, int32.
#include "exec/shape_test_util.h"

namespace gpuclean::testing {
namespace {

TEST(ReduceProd, FloatAxisCombinations) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {2, 5, 4, 3});
  b.Output(b.ReduceProd(x, {1, 2}, true));
  b.Output(b.ReduceProd(x, {-1}, false));
  b.Output(b.ReduceProd(x, {0, 2}, false));
  b.Output(b.ReduceProd(x, {0, 1, 2, 3}, false));
  b.Output(b.ReduceProd(x, {3, -1}, true));
  const ir::Model model = b.Finish();
  // Values near 1 keep 120-element products finite.
  const std::vector<npy::Array> inputs = {RandomF32({2, 5, 4, 3}, 31, 0.8f, 1.25f)};
  ExpectMatchesLiteRt(model, inputs);
  ExpectThreadsAgree(model, inputs);
}

TEST(ReduceProd, Int32) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_INT32, {4, 5});
  b.Output(b.ReduceProd(x, {1}, false));
  b.Output(b.ReduceProd(x, {0}, true));
  const ir::Model model = b.Finish();
  ExpectMatchesLiteRt(model, {RandomI32({4, 5}, 32, -4, 4)});
}

}  // namespace
}  // namespace gpuclean::testing
