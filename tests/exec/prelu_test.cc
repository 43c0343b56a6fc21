// PRELU against LiteRT.js: alpha per channel as a constant (the converter's
// layout: [C] and [1, 1, C]), alpha of the input's shape fed at run time,
// alpha broadcast along other axes, a scalar alpha, and alpha and input
// broadcasting against each other (the output takes the broadcast shape).
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

TEST(Prelu, ConstantPerChannelAlpha) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {1, 4, 5, 3});
  const int big = b.Input("big", kF32, {2, 97, 131, 3});
  const int a1 = b.ConstF32("a1", {3}, {0.25f, -0.5f, 1.5f});
  const int a2 = b.ConstF32("a2", {1, 1, 3}, {0.0f, 2.0f, 0.1f});
  b.Output(b.Prelu(x, a1));
  b.Output(b.Prelu(x, a2));
  b.Output(b.Prelu(big, a1));
  const ir::Model model = b.Finish();
  const std::vector<npy::Array> inputs = {RandomF32({1, 4, 5, 3}, 3900, -4, 4), RandomF32({2, 97, 131, 3}, 3901, -4, 4)};
  ExpectMatchesLiteRt(model, inputs);
  ExpectThreadsAgree(model, inputs);
}

TEST(Prelu, RuntimeAndBroadcastAlpha) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {2, 5, 3});
  const int a = b.Input("a", kF32, {2, 5, 3});
  const int y = b.Input("y", kF32, {2, 6});
  const int ay = b.Input("ay", kF32, {2, 1});
  const int z = b.Input("z", kF32, {4, 1, 3});
  const int az = b.Input("az", kF32, {1, 5, 1});
  const int s = b.Input("s", kF32, {7});
  b.Output(b.Prelu(x, a));
  b.Output(b.Prelu(y, ay));
  b.Output(b.Prelu(z, az));  // -> [4, 5, 3]
  b.Output(b.Prelu(s, b.ConstF32("as", {}, {0.3f})));
  const ir::Model model = b.Finish();
  ExpectMatchesLiteRt(model, {RandomF32({2, 5, 3}, 3910, -4, 4), RandomF32({2, 5, 3}, 3911, -2, 2),
                              RandomF32({2, 6}, 3912, -4, 4), RandomF32({2, 1}, 3913, -2, 2),
                              RandomF32({4, 1, 3}, 3914, -4, 4), RandomF32({1, 5, 1}, 3915, -2, 2),
                              F32({7}, {0.0f, -0.0f, -1.0f, 2.0f, -INFINITY, INFINITY, -3.0f})});
}

TEST(Prelu, HandComputed) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {2, 3});
  b.Output(b.Prelu(x, b.ConstF32("a", {3}, {0.5f, -1.0f, 0.0f})));
  const auto out = RunOurs(b.Finish(), {F32({2, 3}, {-2.0f, -2.0f, -2.0f, 4.0f, 0.0f, NAN})});
  ExpectSameFloats(ValuesOf<float>(out[0]), {-1.0f, 2.0f, -0.0f, 4.0f, 0.0f, NAN});
}

}  // namespace
}  // namespace gpuclean::testing::ewt
