// ctest-labels: litert
#include "gpuclean/builder.h"
#include "gpuclean/synth.h"
#include "rewrite/pass_proof.h"
#include "support/arrays.h"
#include "support/tflite_names.h"

namespace gpuclean::rewrite {
namespace {

using builder::GraphBuilder;
using ::gpuclean::testing::tflite_names::F32;
constexpr const char* kTarget = "mldrift-cl@2.1.5";

// Hard-sigmoid as converters emit it: x * 1/6 + 0.5 clamped by RELU_0_TO_1,
// twice (two sites), the second feeding a multiply (hard-swish-like).
ir::Model HardSigmoidBlock() {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 2, 2, 3});
  int h = b.Relu0To1(b.Add(b.Mul(x, b.ConstF32("sixth", {}, {1.0f / 6.0f})), b.ConstF32("half", {}, {0.5f})));
  b.Output(b.Mul(x, b.Relu0To1(h)));
  b.Output(h);
  return b.Finish();
}

TEST(Relu0To1ToRelus, ClampsLikeTheOriginalOnEveryRange) {
  const ir::Model model = HardSigmoidBlock();
  // x spans below -3 (clamped to 0), the linear part, and above 3 (clamped to 1).
  const testing::PassProof proof = testing::ExpectPassProven(
      "relu0to1-to-relus", model,
      {testing::F32({1, 2, 2, 3}, {-9, -3, -2.5f, -1, -0.1f, 0, 0.2f, 1.5f, 2.99f, 3, 3.5f, 1e6f})}, 2);
  EXPECT_EQ(proof.result.sites.size(), 2u);
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_RELU_0_TO_1), 0);
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_RELU), 4);
  testing::ExpectFindingGone(model, proof.rewritten, "relu-0-to-1", kTarget);
}

TEST(Relu0To1ToRelus, FixesTheHardSigmoidProbe) {
  const ir::Model model = synth::Build("hard-sigmoid");
  const testing::PassProof proof = testing::ExpectPassProven(
      "relu0to1-to-relus", model, {testing::F32({1, 8}, {-2, -0.5f, 0, 0.25f, 0.75f, 1, 1.5f, 100})});
  testing::ExpectFindingGone(model, proof.rewritten, "relu-0-to-1", kTarget);
}

TEST(Relu0To1ToRelus, LeavesOtherClampsAlone) {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 4});
  b.Output(b.ReluN1To1(b.Relu6(x)));
  ir::Model model = b.Finish();
  const PassResult result = FindPass("relu0to1-to-relus")->Apply(model, {});
  EXPECT_TRUE(result.sites.empty());
  EXPECT_EQ(model.main().ops.size(), 2u);
}

}  // namespace
}  // namespace gpuclean::rewrite
