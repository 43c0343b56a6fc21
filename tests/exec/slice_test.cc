// ctest-labels: litert
// SLICE against LiteRT.js: offsets, size -1, full and unit extents, int32 and bool.
#include "exec/shape_test_util.h"

namespace gpuclean::testing {
namespace {

TEST(Slice, BeginsAndSizes) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {3, 5, 7, 4});
  const int i = b.Input("i", tfl::TensorType_INT32, {6, 5});
  b.Output(b.Slice(x, {1, 0, 2, 1}, {2, 5, 3, 2}));
  b.Output(b.Slice(x, {0, 2, 0, 0}, {-1, -1, -1, -1}));
  b.Output(b.Slice(x, {2, 4, 6, 3}, {1, 1, 1, 1}));
  b.Output(b.Slice(x, {0, 0, 0, 0}, {3, 5, 7, 4}));
  b.Output(b.Slice(i, {1, 3}, {-1, 2}));
  b.Output(AsFloat(b, b.Slice(PositiveMask(b, x), {1, 1, 1, 1}, {1, 3, -1, 2})));
  const ir::Model model = b.Finish();
  const std::vector<npy::Array> inputs = {RandomF32({3, 5, 7, 4}, 121), RandomI32({6, 5}, 122, -9, 9)};
  ExpectMatchesLiteRt(model, inputs);
  ExpectThreadsAgree(model, inputs);
}

}  // namespace
}  // namespace gpuclean::testing
