// ctest-labels: litert
// BROADCAST_TO against LiteRT.js: added leading dims, unit dims stretched,
// unchanged shape, int32 and bool data.
#include "exec/shape_test_util.h"

namespace gpuclean::testing {
namespace {

TEST(BroadcastTo, Shapes) {
  GraphBuilder b;
  const int v = b.Input("v", tfl::TensorType_FLOAT32, {3});
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {2, 1, 3});
  const int i = b.Input("i", tfl::TensorType_INT32, {4, 1});
  b.Output(b.BroadcastTo(v, {2, 4, 3}));
  b.Output(b.BroadcastTo(x, {2, 5, 3}));
  b.Output(b.BroadcastTo(x, {3, 2, 4, 3}));
  b.Output(b.BroadcastTo(x, {2, 1, 3}));
  b.Output(b.BroadcastTo(i, {2, 4, 6}));
  b.Output(AsFloat(b, b.BroadcastTo(PositiveMask(b, x), {2, 2, 3})));
  const ir::Model model = b.Finish();
  const std::vector<npy::Array> inputs = {RandomF32({3}, 221), RandomF32({2, 1, 3}, 222),
                                          RandomI32({4, 1}, 223, -9, 9)};
  ExpectMatchesLiteRt(model, inputs);
  ExpectThreadsAgree(model, inputs);
}

}  // namespace
}  // namespace gpuclean::testing
