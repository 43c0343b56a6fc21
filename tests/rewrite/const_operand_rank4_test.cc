// ctest-labels: litert webgpu
// const-operand-rank4, proven on our interpreter and LiteRT.js (wasm), and
// measured on LiteRT.js's WebGPU delegate (litert-webgpu, fp32): with a
// 2-D/3-D constant whose first dimension is > 1 the outputs are wrong; at
// rank 4 with leading 1s they are right.
#include "gpuclean/builder.h"
#include "gpuclean/synth.h"
#include "rewrite/pass_proof.h"
#include "support/tflite_names.h"

namespace gpuclean::rewrite {
namespace {

using builder::GraphBuilder;
using ::gpuclean::testing::tflite_names::F32;

std::vector<float> Values(const std::vector<int64_t>& shape, uint32_t seed) {
  const npy::Array a = synth::HashUniform(shape, 0.5f, 1.5f, seed);
  return std::vector<float>(a.as<float>(), a.as<float>() + a.num_elements());
}

TEST(ConstOperandRank4, RewritesBatchedConstantsAndFixesWebGpu) {
  GraphBuilder b;
  const int x = b.Input("x", F32, {20, 1, 128});
  const int tokens = b.Input("tokens", F32, {20, 5, 128});
  const int q = b.Add(b.ConstF32("queries", {20, 1, 128}, Values({20, 1, 128}, 101)), x);
  const int scaled = b.Mul(b.Reshape(q, {20, 128}), b.ConstF32("scale", {20, 128}, Values({20, 128}, 102)));
  b.Output(scaled);
  b.Output(b.Sub(b.ConstF32("bias", {20, 1, 128}, Values({20, 1, 128}, 103)), tokens));  // broadcast over 5
  const ir::Model model = b.Finish();
  const std::vector<npy::Array> inputs = {synth::HashUniform({20, 1, 128}, -1, 1, 104),
                                          synth::HashUniform({20, 5, 128}, -1, 1, 105)};
  const testing::PassProof proof = testing::ExpectPassProven("const-operand-rank4", model, inputs, 3);
  const auto before = testing::RunOurs(model, inputs), after = testing::RunOurs(proof.rewritten, inputs);
  for (size_t i = 0; i < before.size(); ++i) EXPECT_EQ(before[i].data, after[i].data) << i;
  testing::ExpectFindingGone(model, proof.rewritten, "elementwise-const-batched", "mldrift-webgpu@2.5.3");
  const std::vector<double> corr = testing::WebGpuCorrelations({model, proof.rewritten}, {inputs, inputs}, "fp32");
  EXPECT_LT(corr[0], 0.9) << "measured wrong here; if this now holds, re-measure the matrix entry";
  EXPECT_GE(corr[1], 0.99999);
}

// A [1, N, C] constant (the usual bias or position table) is read right.
TEST(ConstOperandRank4, LeavesUnbatchedConstantsAlone) {
  GraphBuilder b;
  const int x = b.Input("x", F32, {1, 20, 128});
  b.Output(b.Add(x, b.ConstF32("pos", {1, 20, 128}, Values({1, 20, 128}, 106))));
  ir::Model model = b.Finish();
  EXPECT_EQ(testing::CountFindings(model, "elementwise-const-batched", "mldrift-webgpu@2.5.3"), 0);
  EXPECT_TRUE(FindPass("const-operand-rank4")->Apply(model, {}).sites.empty());
}

}  // namespace
}  // namespace gpuclean::rewrite
