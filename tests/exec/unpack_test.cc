// ctest-labels: litert
// UNPACK against LiteRT.js: every axis (negative too), int32 and bool data.
#include "exec/shape_test_util.h"

namespace gpuclean::testing {
namespace {

TEST(Unpack, Axes) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {2, 3, 4});
  const int i = b.Input("i", tfl::TensorType_INT32, {3, 2});
  for (int out : b.Unpack(x, 0)) b.Output(out);
  for (int out : b.Unpack(x, 1)) b.Output(out);
  for (int out : b.Unpack(x, -1)) b.Output(out);
  for (int out : b.Unpack(i, 1)) b.Output(out);
  for (int out : b.Unpack(PositiveMask(b, x), -2)) b.Output(AsFloat(b, out));
  const ir::Model model = b.Finish();
  ExpectMatchesLiteRt(model, {RandomF32({2, 3, 4}, 201), RandomI32({3, 2}, 202, -9, 9)});
}

}  // namespace
}  // namespace gpuclean::testing
