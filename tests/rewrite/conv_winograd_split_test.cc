// ctest-labels: litert webgpu
// conv-winograd-split, proven on our interpreter and LiteRT.js (wasm), and
// measured on LiteRT.js's WebGPU delegate (litert-webgpu, fp16): the 3x3
// conv on the Winograd path gives unrelated numbers, the split one is right.
#include "gpuclean/builder.h"
#include "gpuclean/synth.h"
#include "rewrite/pass_proof.h"
#include "support/tflite_names.h"

namespace gpuclean::rewrite {
namespace {

using builder::GraphBuilder;
using ::gpuclean::testing::targets::kWebGpu;
using ::gpuclean::testing::tflite_names::F32;

ir::Model Conv3x3(int channels, int size) {
  GraphBuilder b;
  const int x = b.Input("x", F32, {1, size, size, channels});
  const npy::Array w = synth::HashUniform({channels, 3, 3, channels}, -0.1f, 0.1f, 81);
  const npy::Array bias = synth::HashUniform({channels}, -0.5f, 0.5f, 82);
  const int filter =
      b.ConstF32("w", {channels, 3, 3, channels}, std::vector<float>(w.as<float>(), w.as<float>() + w.num_elements()));
  const int bconst = b.ConstF32("b", {channels}, std::vector<float>(bias.as<float>(), bias.as<float>() + channels));
  b.Output(b.Conv2D(x, filter, bconst, tfl::Padding_SAME, 1, 1, tfl::ActivationFunctionType_RELU));
  return b.Finish();
}

TEST(ConvWinogradSplit, SplitsOutputChannelsAndFixesWebGpuFp16) {
  const ir::Model model = Conv3x3(64, 28);
  const std::vector<npy::Array> inputs = {synth::HashUniform({1, 28, 28, 64}, -1, 1, 83)};
  const testing::PassProof proof = testing::ExpectPassProven("conv-winograd-split", model, inputs);
  EXPECT_EQ(testing::RunOurs(model, inputs)[0].data, testing::RunOurs(proof.rewritten, inputs)[0].data);
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_CONV_2D), 2);
  testing::ExpectFindingGone(model, proof.rewritten, "conv-3x3-winograd-fp16", kWebGpu);
  const std::vector<double> corr = testing::WebGpuCorrelations({model, proof.rewritten}, {inputs, inputs}, "fp16");
  EXPECT_LT(corr[0], 0.5)
      << "the Winograd path was measured wrong here; if this now holds, re-measure the matrix entry";
  EXPECT_GE(corr[1], 0.999);
}

// 64 channels on 16x16 (16 tiles) stays on the direct kernels: no finding.
TEST(ConvWinogradSplit, FewTilesAreNotFlagged) {
  EXPECT_EQ(testing::CountFindings(Conv3x3(64, 16), "conv-3x3-winograd-fp16", kWebGpu), 0);
  EXPECT_EQ(testing::CountFindings(Conv3x3(60, 28), "conv-3x3-winograd-fp16", kWebGpu), 0);
  EXPECT_EQ(testing::CountFindings(Conv3x3(64, 28), "conv-3x3-winograd-fp16", kWebGpu), 1);
}

}  // namespace
}  // namespace gpuclean::rewrite
