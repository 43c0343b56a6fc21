// ctest-labels: litert
// EXPAND_DIMS against LiteRT.js: leading, inner, trailing and negative axes;
// int32 and bool data.
#include "exec/shape_test_util.h"

namespace gpuclean::testing {
namespace {

TEST(ExpandDims, AxesAndDtypes) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {3, 4});
  const int i = b.Input("i", tfl::TensorType_INT32, {5});
  b.Output(b.ExpandDims(x, 0));
  b.Output(b.ExpandDims(x, 1));
  b.Output(b.ExpandDims(x, 2));
  b.Output(b.ExpandDims(x, -1));
  b.Output(b.ExpandDims(i, -2));
  b.Output(AsFloat(b, b.ExpandDims(PositiveMask(b, x), 1)));
  const ir::Model model = b.Finish();
  ExpectMatchesLiteRt(model, {RandomF32({3, 4}, 91), RandomI32({5}, 92, -9, 9)});
}

}  // namespace
}  // namespace gpuclean::testing
