// ctest-labels: litert
// SOFTMAX against LiteRT.js: beta, ranks 1 to 4, large logits, depth 1.
#include <cmath>
#include <limits>

#include "exec/conv_test_util.h"
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

// Rows that end in a partial block of 16 and rows of whole blocks; beta 1
// (no multiply), 0.7, and -1.5 (where x - max times beta can overflow); a row
// holding an infinity, one holding a NaN. The AVX-512 path (masked tails,
// reductions in registers) against the portable one: the same bits.
TEST(Softmax, AllInstructionSetsGiveTheSameBits) {
  GraphBuilder b;
  std::vector<npy::Array> inputs;
  const std::vector<std::pair<std::vector<int32_t>, float>> cases = {
      {{5, 196}, 1.0f}, {{3, 16}, 1.0f}, {{4, 33}, 0.7f}, {{6, 15}, -1.5f}, {{2, 1}, 1.0f}, {{3, 100}, 1.0f}};
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto& [shape, beta] = cases[i];
    const int x = b.Input("x" + std::to_string(i), tfl::TensorType_FLOAT32, shape);
    b.Output(b.Softmax(x, beta));
    inputs.push_back(RandomF32(shape, 60 + static_cast<int>(i), -90, 90));
  }
  float* special = reinterpret_cast<float*>(inputs.back().data.data());
  special[3] = std::numeric_limits<float>::infinity();
  special[100 + 7] = std::numeric_limits<float>::quiet_NaN();
  special[200 + 50] = -std::numeric_limits<float>::infinity();
  const ir::Model model = b.Finish();
  convt::ExpectEveryIsaGivesTheGenericBits(model, inputs);
  // The finite rows, whatever the path, against LiteRT.
  inputs.back() = RandomF32({3, 100}, 65, -90, 90);
  ExpectMatchesLiteRt(model, inputs);
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
