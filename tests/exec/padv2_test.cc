// ctest-labels: litert
// PADV2 against LiteRT.js: constant values (negative, fractional), float32
// and int32.
#include "exec/shape_test_util.h"

namespace gpuclean::testing {
namespace {

TEST(PadV2, ConstantValues) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 3, 4, 2});
  const int i = b.Input("i", tfl::TensorType_INT32, {2, 3});
  b.Output(b.PadV2(x, {{0, 0}, {1, 2}, {2, 1}, {0, 0}}, -3.5f));
  b.Output(b.PadV2(x, {{1, 0}, {0, 0}, {0, 3}, {1, 1}}, 0.25f));
  b.Output(b.PadV2(i, {{2, 1}, {0, 1}}, -7.0f));
  const ir::Model model = b.Finish();
  ExpectMatchesLiteRt(model, {RandomF32({1, 3, 4, 2}, 151), RandomI32({2, 3}, 152, -9, 9)});
}

TEST(PadV2, HandComputed) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {2});
  b.Output(b.PadV2(x, {{1, 2}}, 9.0f));
  const auto out = RunOurs(b.Finish(), {F32({2}, {1, 2})});
  EXPECT_EQ(ValuesOf<float>(out[0]), (std::vector<float>{9, 1, 2, 9, 9}));
}

}  // namespace
}  // namespace gpuclean::testing
