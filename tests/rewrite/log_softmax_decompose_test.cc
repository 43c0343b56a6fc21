// ctest-labels: litert webgpu
#include "gpuclean/builder.h"
#include "gpuclean/synth.h"
#include "rewrite/pass_proof.h"
#include "support/arrays.h"
#include "support/tflite_names.h"

namespace gpuclean::rewrite {
namespace {

using builder::GraphBuilder;
using ::gpuclean::testing::tflite_names::F32;

// A CTC-style head: per time step log-probabilities over the classes.
ir::Model LogProbHead() {
  GraphBuilder b;
  b.Output(b.LogSoftmax(b.Input("x", F32, {1, 6, 37})));
  return b.Finish();
}

TEST(LogSoftmaxDecompose, MatchesOnBothRuntimesAndLintIsClean) {
  const ir::Model model = LogProbHead();
  // Logits of ±80 would overflow EXP without the max subtracted first.
  npy::Array x = synth::HashUniform({1, 6, 37}, -80, 80, 11);
  const testing::PassProof proof = testing::ExpectPassProven("log-softmax-decompose", model, {x}, 1);
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_LOG_SOFTMAX), 0);
  for (const char* target : {"mldrift-webgpu@2.5.3", "mldrift-cl@2.2.0", "mldrift-ir@f674577"}) {
    const std::string rule =
        std::string(target).starts_with("mldrift-ir") ? "log-softmax-not-dispatched" : "log-softmax";
    testing::ExpectFindingGone(model, proof.rewritten, rule, target);
  }
}

// On the real WebGPU delegate in half precision the decomposition keeps its
// range (d <= 0, EXP(d) <= 1, the sum at most the row length).
TEST(LogSoftmaxDecompose, HoldsInHalfPrecisionOnWebGpu) {
  const testing::PassProof proof = testing::ExpectPassProven("log-softmax-decompose", LogProbHead(),
                                                             {synth::HashUniform({1, 6, 37}, -30, 30, 12)}, 1);
  const std::vector<double> worst =
      testing::WebGpuCorrelations({proof.rewritten}, {{synth::HashUniform({1, 6, 37}, -30, 30, 12)}}, "fp16");
  ASSERT_EQ(worst.size(), 1u);
  EXPECT_GT(worst[0], 0.9999);
}

}  // namespace
}  // namespace gpuclean::rewrite
