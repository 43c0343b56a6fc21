// ctest-labels: litert
// L2_NORMALIZATION against LiteRT.js: ranks 1 to 4, a zero row (epsilon).
#include "exec/shape_test_util.h"

namespace gpuclean::testing {
namespace {

TEST(L2Normalization, Ranks) {
  GraphBuilder b;
  const int v = b.Input("v", tfl::TensorType_FLOAT32, {7});
  const int m = b.Input("m", tfl::TensorType_FLOAT32, {4, 16});
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 3, 5, 8});
  b.Output(b.L2Normalization(v));
  b.Output(b.L2Normalization(m));
  b.Output(b.L2Normalization(x));
  const ir::Model model = b.Finish();
  ExpectMatchesLiteRt(model, {RandomF32({7}, 61), RandomF32({4, 16}, 62, -10, 10), RandomF32({1, 3, 5, 8}, 63)});
}

TEST(L2Normalization, TinyAndZeroRows) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {3, 3});
  b.Output(b.L2Normalization(x));
  const ir::Model model = b.Finish();
  const npy::Array in = F32({3, 3}, {0, 0, 0, 1e-8f, -2e-8f, 0, 3, 4, 0});
  ExpectMatchesLiteRt(model, {in});
  // A norm under 1e-6 divides by 1e-6.
  const std::vector<float> got = ValuesOf<float>(RunOurs(model, {in})[0]);
  EXPECT_EQ(got[0], 0.0f);
  EXPECT_FLOAT_EQ(got[3], 1e-8f / 1e-6f);
  EXPECT_FLOAT_EQ(got[6], 0.6f);
}

TEST(L2Normalization, RejectsFusedActivation) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {2, 3});
  b.Output(b.L2Normalization(x, tfl::ActivationFunctionType_RELU));
  ExpectInterpreterRefuses(b.Finish());
}

}  // namespace
}  // namespace gpuclean::testing
