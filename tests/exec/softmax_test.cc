// ctest-labels: litert
// SOFTMAX against LiteRT.js: beta, ranks 1 to 4, large logits, depth 1.
#include "exec/shape_test_util.h"

namespace gpuclean::testing {
namespace {

TEST(Softmax, BetaAndRanks) {
  GraphBuilder b;
  const int v = b.Input("v", tfl::TensorType_FLOAT32, {10});
  const int m = b.Input("m", tfl::TensorType_FLOAT32, {3, 17});
  const int t = b.Input("t", tfl::TensorType_FLOAT32, {2, 3, 5});
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 4, 4, 33});
  const int one = b.Input("one", tfl::TensorType_FLOAT32, {4, 1});
  b.Output(b.Softmax(v, 1.0f));
  b.Output(b.Softmax(m, 0.5f));
  b.Output(b.Softmax(t, 2.0f));
  b.Output(b.Softmax(x, 1.0f));
  b.Output(b.Softmax(one, 1.0f));
  const ir::Model model = b.Finish();
  const std::vector<npy::Array> inputs = {RandomF32({10}, 41, -3, 3), RandomF32({3, 17}, 42, -80, 80),
                                          RandomF32({2, 3, 5}, 43, -10, 10), RandomF32({1, 4, 4, 33}, 44, -5, 5),
                                          RandomF32({4, 1}, 45)};
  ExpectMatchesLiteRt(model, inputs);
  ExpectThreadsAgree(model, inputs);
}

TEST(Softmax, HandComputedUniformRow) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 4});
  b.Output(b.Softmax(x, 1.0f));
  const auto out = RunOurs(b.Finish(), {F32({1, 4}, {1000, 1000, 1000, 1000})});
  EXPECT_EQ(ValuesOf<float>(out[0]), (std::vector<float>{0.25f, 0.25f, 0.25f, 0.25f}));
}

TEST(Softmax, RejectsInt32) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_INT32, {2, 3});
  b.Output(b.Op(tfl::BuiltinOperator_SOFTMAX, {x}, builder::Options(tfl::SoftmaxOptionsT{})).at(0));
  ExpectInterpreterRefuses(b.Finish());
}

}  // namespace
}  // namespace gpuclean::testing
