#include <limits>

#include "gpuclean/builder.h"
#include "gpuclean/synth.h"
#include "rewrite/pass_proof.h"
#include "support/arrays.h"

namespace gpuclean::rewrite {
namespace {

using builder::Activation;
using builder::GraphBuilder;
using builder::kNoActivation;
constexpr auto F32 = tfl::TensorType_FLOAT32;
const builder::Paddings kPadHW1 = {{0, 0}, {1, 1}, {1, 1}, {0, 0}};

// The ResNet stem as converters emit it: conv + fused ReLU, -inf padding,
// 3x3 stride-2 max-pool.
ir::Model Stem(Activation act, float value, const builder::Paddings& pads, tfl::Padding pool_padding, int filter,
               int stride) {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 7, 6, 3});
  std::vector<float> w(4 * 3 * 3 * 3);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.1f * static_cast<float>(static_cast<int>(i % 7) - 3);
  int y = b.Conv2D(x, b.ConstF32("w", {4, 3, 3, 3}, w), builder::kNoInput, tfl::Padding_SAME, 1, 1, act);
  b.Output(b.MaxPool2D(b.PadV2(y, pads, value), pool_padding, stride, stride, filter, filter));
  return b.Finish();
}

npy::Array StemInput(uint32_t seed) { return synth::HashUniform({1, 7, 6, 3}, -4, 4, seed); }

size_t Sites(ir::Model model) { return FindPass("padv2-to-pad0")->Apply(model, {}).sites.size(); }

TEST(Padv2ToPad0, FixesThePadv2MaxpoolProbe) {
  const ir::Model model = synth::Build("padv2-maxpool");
  const testing::PassProof proof =
      testing::ExpectPassProven("padv2-to-pad0", model, {synth::HashUniform({1, 4, 4, 3}, -4, 4, 1)});
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_PADV2), 0);
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_PAD), 1);
  testing::ExpectFindingGone(model, proof.rewritten, "padv2-nonzero");
}

TEST(Padv2ToPad0, MinusInfinityAfterAFusedReluStem) {
  for (Activation act : {tfl::ActivationFunctionType_RELU, tfl::ActivationFunctionType_RELU6}) {
    SCOPED_TRACE(act);
    const ir::Model model =
        Stem(act, -std::numeric_limits<float>::infinity(), kPadHW1, tfl::Padding_VALID, 3, 2);
    const testing::PassProof proof = testing::ExpectPassProven("padv2-to-pad0", model, {StemInput(2)});
    EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_PADV2), 0);
    testing::ExpectFindingGone(model, proof.rewritten, "padv2-nonzero");
  }
}

TEST(Padv2ToPad0, UnevenPaddingAndASamePool) {
  const builder::Paddings pads = {{0, 0}, {0, 1}, {1, 0}, {0, 0}};
  const ir::Model model = Stem(tfl::ActivationFunctionType_RELU, -1e9f, pads, tfl::Padding_SAME, 3, 2);
  testing::ExpectPassProven("padv2-to-pad0", model, {StemInput(3)});
}

TEST(Padv2ToPad0, ZeroValuedPadv2NeedsNoPrecondition) {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 3, 3, 2});
  b.Output(b.Tanh(b.PadV2(x, kPadHW1, 0.0f)));
  const ir::Model model = b.Finish();
  const testing::PassProof proof =
      testing::ExpectPassProven("padv2-to-pad0", model, {synth::HashUniform({1, 3, 3, 2}, -4, 4, 4)});
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_PADV2), 0);
}

TEST(Padv2ToPad0, LeavesInputsThatMayBeNegativeAlone) {
  // No activation, and RELU_N1_TO_1 (whose range reaches -1).
  EXPECT_EQ(Sites(Stem(kNoActivation, -1e9f, kPadHW1, tfl::Padding_VALID, 3, 2)), 0u);
  EXPECT_EQ(Sites(Stem(tfl::ActivationFunctionType_RELU_N1_TO_1, -1e9f, kPadHW1, tfl::Padding_VALID, 3, 2)), 0u);
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 4, 4, 3});
  b.Output(b.MaxPool2D(b.PadV2(b.ReluN1To1(x), kPadHW1, -1e9f), tfl::Padding_VALID, 2, 2, 3, 3));
  EXPECT_EQ(Sites(b.Finish()), 0u);
}

TEST(Padv2ToPad0, LeavesAWindowOfOnlyPaddingAlone) {
  // Two rows of padding and a 2x2 stride-2 pool: the first window row is all
  // padding and yields -1e9 in the original, 0 after a zero pad.
  const builder::Paddings pads = {{0, 0}, {2, 2}, {0, 0}, {0, 0}};
  const ir::Model model = Stem(tfl::ActivationFunctionType_RELU, -1e9f, pads, tfl::Padding_VALID, 2, 2);
  EXPECT_EQ(Sites(model), 0u);
  const npy::Array out = testing::RunOurs(model, {StemInput(5)})[0];
  EXPECT_EQ(out.as<float>()[0], -1e9f) << "the near-miss should really depend on the pad value";
}

TEST(Padv2ToPad0, LeavesPaddedChannelsAndOtherConsumersAlone) {
  const builder::Paddings channels = {{0, 0}, {1, 1}, {1, 1}, {0, 1}};
  EXPECT_EQ(Sites(Stem(tfl::ActivationFunctionType_RELU, -1e9f, channels, tfl::Padding_VALID, 3, 2)), 0u);
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 4, 4, 3});
  int padded = b.PadV2(b.Relu(x), kPadHW1, -1e9f);
  b.Output(b.MaxPool2D(padded, tfl::Padding_VALID, 2, 2, 3, 3));
  b.Output(padded);
  EXPECT_EQ(Sites(b.Finish()), 0u);
}

}  // namespace
}  // namespace gpuclean::rewrite
