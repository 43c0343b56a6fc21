// ctest-labels: litert
#include <limits>

#include "gpuclean/builder.h"
#include "gpuclean/synth.h"
#include "rewrite/pass_proof.h"
#include "support/arrays.h"
#include "support/tflite_names.h"

namespace gpuclean::rewrite {
namespace {

using builder::Activation;
using builder::GraphBuilder;
using builder::kNoActivation;
using ::gpuclean::testing::tflite_names::F32;
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

size_t SitesPadv2ToPad0(ir::Model model) { return FindPass("padv2-to-pad0")->Apply(model, {}).sites.size(); }

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
    const ir::Model model = Stem(act, -std::numeric_limits<float>::infinity(), kPadHW1, tfl::Padding_VALID, 3, 2);
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
  EXPECT_EQ(SitesPadv2ToPad0(Stem(kNoActivation, -1e9f, kPadHW1, tfl::Padding_VALID, 3, 2)), 0u);
  EXPECT_EQ(SitesPadv2ToPad0(Stem(tfl::ActivationFunctionType_RELU_N1_TO_1, -1e9f, kPadHW1, tfl::Padding_VALID, 3, 2)),
            0u);
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 4, 4, 3});
  b.Output(b.MaxPool2D(b.PadV2(b.ReluN1To1(x), kPadHW1, -1e9f), tfl::Padding_VALID, 2, 2, 3, 3));
  EXPECT_EQ(SitesPadv2ToPad0(b.Finish()), 0u);
}

TEST(Padv2ToPad0, LeavesAWindowOfOnlyPaddingAlone) {
  // Two rows of padding and a 2x2 stride-2 pool: the first window row is all
  // padding and yields -1e9 in the original, 0 after a zero pad.
  const builder::Paddings pads = {{0, 0}, {2, 2}, {0, 0}, {0, 0}};
  const ir::Model model = Stem(tfl::ActivationFunctionType_RELU, -1e9f, pads, tfl::Padding_VALID, 2, 2);
  EXPECT_EQ(SitesPadv2ToPad0(model), 0u);
  const npy::Array out = testing::RunOurs(model, {StemInput(5)})[0];
  EXPECT_EQ(out.as<float>()[0], -1e9f) << "the near-miss should really depend on the pad value";
}

TEST(Padv2ToPad0, LeavesPaddedChannelsAndOtherConsumersAlone) {
  const builder::Paddings channels = {{0, 0}, {1, 1}, {1, 1}, {0, 1}};
  EXPECT_EQ(SitesPadv2ToPad0(Stem(tfl::ActivationFunctionType_RELU, -1e9f, channels, tfl::Padding_VALID, 3, 2)), 0u);
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 4, 4, 3});
  int padded = b.PadV2(b.Relu(x), kPadHW1, -1e9f);
  b.Output(b.MaxPool2D(padded, tfl::Padding_VALID, 2, 2, 3, 3));
  b.Output(padded);
  EXPECT_EQ(SitesPadv2ToPad0(b.Finish()), 0u);
}

// Without a ReLU the -inf padding cannot become zeros, but when it is
// exactly what a SAME pool adds (7x6 map, 3x3 stride 2: H (1,1), W (0,1))
// the VALID pool over it is one SAME pool, which skips padded cells.
const builder::Paddings kSame7x6 = {{0, 0}, {1, 1}, {0, 1}, {0, 0}};

TEST(Padv2ToPad0, MinusInfinityAsSamePaddingWithoutAReluBecomesASamePool) {
  for (float value : {-std::numeric_limits<float>::infinity(), std::numeric_limits<float>::lowest()}) {
    SCOPED_TRACE(value);
    const ir::Model model = Stem(kNoActivation, value, kSame7x6, tfl::Padding_VALID, 3, 2);
    const testing::PassProof proof = testing::ExpectPassProven("padv2-to-pad0", model, {StemInput(6)});
    EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_PADV2), 0);
    EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_PAD), 0);
    ASSERT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_MAX_POOL_2D), 1);
    for (const ir::Op& op : proof.rewritten.main().ops)
      if (op.code == tfl::BuiltinOperator_MAX_POOL_2D)
        EXPECT_EQ(op.options.AsPool2DOptions()->padding, tfl::Padding_SAME);
    // Negative inputs: a zero pad would have won windows the -inf pad does not.
    EXPECT_EQ(testing::RunOurs(model, {StemInput(6)})[0].data,
              testing::RunOurs(proof.rewritten, {StemInput(6)})[0].data);
    testing::ExpectFindingGone(model, proof.rewritten, "padv2-nonzero");
  }
}

// Padding past the last window is never read: W (0,2) pools like W (0,1).
// The pool's fused activation carries over.
TEST(Padv2ToPad0, UnreadTrailingPaddingAndAFusedActivation) {
  const builder::Paddings pads = {{0, 0}, {1, 1}, {0, 2}, {0, 0}};
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 7, 6, 3});
  b.Output(b.MaxPool2D(b.PadV2(x, pads, -std::numeric_limits<float>::infinity()), tfl::Padding_VALID, 2, 2, 3, 3,
                       tfl::ActivationFunctionType_RELU6));
  const ir::Model model = b.Finish();
  const testing::PassProof proof = testing::ExpectPassProven("padv2-to-pad0", model, {StemInput(7)});
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_PADV2), 0);
}

TEST(Padv2ToPad0, LeavesFinitePadValuesAndNonSamePaddingWithoutAReluAlone) {
  // -1e9 is not -inf: a window of inputs all below it would differ.
  const ir::Model finite = Stem(kNoActivation, -1e9f, kSame7x6, tfl::Padding_VALID, 3, 2);
  EXPECT_EQ(SitesPadv2ToPad0(finite), 0u);
  ir::Model copy = finite;
  const PassResult r = FindPass("padv2-to-pad0")->Apply(copy, {});
  ASSERT_EQ(r.skipped.size(), 1u);
  EXPECT_NE(r.skipped[0].why.find("-1e+09 is finite"), std::string::npos) << r.skipped[0].why;
  // SAME would put no padding before W (6 columns, 3x3 stride 2).
  const ir::Model shifted =
      Stem(kNoActivation, -std::numeric_limits<float>::infinity(), kPadHW1, tfl::Padding_VALID, 3, 2);
  EXPECT_EQ(SitesPadv2ToPad0(shifted), 0u);
  // Already SAME on top of the padding: the pool would pad again.
  EXPECT_EQ(
      SitesPadv2ToPad0(Stem(kNoActivation, -std::numeric_limits<float>::infinity(), kSame7x6, tfl::Padding_SAME, 3, 2)),
      0u);
}

}  // namespace
}  // namespace gpuclean::rewrite
