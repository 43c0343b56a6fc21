// ctest-labels: litert
// LOG_SOFTMAX against LiteRT.js: ranks 1 to 4, large logits, depth 1.
#include "exec/shape_test_util.h"

namespace gpuclean::testing {
namespace {

TEST(LogSoftmax, Ranks) {
  GraphBuilder b;
  const int v = b.Input("v", tfl::TensorType_FLOAT32, {10});
  const int m = b.Input("m", tfl::TensorType_FLOAT32, {3, 17});
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {2, 3, 3, 9});
  const int one = b.Input("one", tfl::TensorType_FLOAT32, {5, 1});
  b.Output(b.LogSoftmax(v));
  b.Output(b.LogSoftmax(m));
  b.Output(b.LogSoftmax(x));
  b.Output(b.LogSoftmax(one));
  const ir::Model model = b.Finish();
  const std::vector<npy::Array> inputs = {RandomF32({10}, 51, -3, 3), RandomF32({3, 17}, 52, -60, 60),
                                          RandomF32({2, 3, 3, 9}, 53, -5, 5), RandomF32({5, 1}, 54)};
  ExpectMatchesLiteRt(model, inputs);
}

TEST(LogSoftmax, HandComputed) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {2});
  b.Output(b.LogSoftmax(x));
  const auto out = RunOurs(b.Finish(), {F32({2}, {3.0f, 3.0f})});
  for (float y : ValuesOf<float>(out[0])) EXPECT_FLOAT_EQ(y, -std::log(2.0f));
}

}  // namespace
}  // namespace gpuclean::testing
