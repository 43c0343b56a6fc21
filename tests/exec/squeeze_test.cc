// ctest-labels: litert
// SQUEEZE against LiteRT.js: all unit dims, listed and negative dims, int32, bool.
#include "exec/shape_test_util.h"

namespace gpuclean::testing {
namespace {

TEST(Squeeze, DimsAndDtypes) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 3, 1, 4, 1});
  const int i = b.Input("i", tfl::TensorType_INT32, {1, 5, 1});
  b.Output(b.Squeeze(x));
  b.Output(b.Squeeze(x, {0, -1}));
  b.Output(b.Squeeze(x, {2}));
  b.Output(b.Squeeze(i, {-3}));
  b.Output(AsFloat(b, b.Squeeze(PositiveMask(b, x), {0, 2})));
  const ir::Model model = b.Finish();
  ExpectMatchesLiteRt(model, {RandomF32({1, 3, 1, 4, 1}, 81), RandomI32({1, 5, 1}, 82, -9, 9)});
}

}  // namespace
}  // namespace gpuclean::testing
