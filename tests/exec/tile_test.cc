// ctest-labels: litert
// TILE against LiteRT.js: multiples of 1 and more on each dim, ranks 1 to 4,
// int32 and bool data.
#include "exec/shape_test_util.h"

namespace gpuclean::testing {
namespace {

TEST(Tile, Multiples) {
  GraphBuilder b;
  const int v = b.Input("v", tfl::TensorType_FLOAT32, {3});
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {2, 1, 3});
  const int y = b.Input("y", tfl::TensorType_FLOAT32, {1, 2, 2, 3});
  const int i = b.Input("i", tfl::TensorType_INT32, {2, 3});
  b.Output(b.Tile(v, {4}));
  b.Output(b.Tile(x, {1, 5, 1}));
  b.Output(b.Tile(x, {3, 2, 2}));
  b.Output(b.Tile(y, {2, 1, 3, 1}));
  b.Output(b.Tile(y, {1, 1, 1, 1}));
  b.Output(b.Tile(i, {2, 3}));
  b.Output(AsFloat(b, b.Tile(PositiveMask(b, x), {2, 2, 1})));
  const ir::Model model = b.Finish();
  const std::vector<npy::Array> inputs = {RandomF32({3}, 211), RandomF32({2, 1, 3}, 212), RandomF32({1, 2, 2, 3}, 213),
                                          RandomI32({2, 3}, 214, -9, 9)};
  ExpectMatchesLiteRt(model, inputs);
  ExpectThreadsAgree(model, inputs);
}

}  // namespace
}  // namespace gpuclean::testing
