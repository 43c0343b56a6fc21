// ctest-labels: litert
// MIRROR_PAD against LiteRT.js: REFLECT and SYMMETRIC, paddings up to the
// largest each mode allows, ranks 1 to 4, int32 data.
#include "exec/shape_test_util.h"

namespace gpuclean::testing {
namespace {

TEST(MirrorPad, ReflectAndSymmetric) {
  GraphBuilder b;
  const int v = b.Input("v", tfl::TensorType_FLOAT32, {5});
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 4, 3, 2});
  const int i = b.Input("i", tfl::TensorType_INT32, {3, 4});
  b.Output(b.MirrorPad(v, {{4, 4}}, tfl::MirrorPadMode_REFLECT));
  b.Output(b.MirrorPad(v, {{5, 2}}, tfl::MirrorPadMode_SYMMETRIC));
  b.Output(b.MirrorPad(x, {{0, 0}, {2, 3}, {2, 2}, {0, 1}}, tfl::MirrorPadMode_REFLECT));
  b.Output(b.MirrorPad(x, {{1, 0}, {4, 1}, {3, 3}, {2, 2}}, tfl::MirrorPadMode_SYMMETRIC));
  b.Output(b.MirrorPad(i, {{2, 1}, {0, 3}}, tfl::MirrorPadMode_REFLECT));
  const ir::Model model = b.Finish();
  const std::vector<npy::Array> inputs = {RandomF32({5}, 161), RandomF32({1, 4, 3, 2}, 162),
                                          RandomI32({3, 4}, 163, -9, 9)};
  ExpectMatchesLiteRt(model, inputs);
  ExpectThreadsAgree(model, inputs);
}

TEST(MirrorPad, HandComputed) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {3});
  b.Output(b.MirrorPad(x, {{2, 2}}, tfl::MirrorPadMode_REFLECT));
  b.Output(b.MirrorPad(x, {{2, 2}}, tfl::MirrorPadMode_SYMMETRIC));
  const auto out = RunOurs(b.Finish(), {F32({3}, {1, 2, 3})});
  EXPECT_EQ(ValuesOf<float>(out[0]), (std::vector<float>{3, 2, 1, 2, 3, 2, 1}));
  EXPECT_EQ(ValuesOf<float>(out[1]), (std::vector<float>{2, 1, 1, 2, 3, 3, 2}));
}

}  // namespace
}  // namespace gpuclean::testing
