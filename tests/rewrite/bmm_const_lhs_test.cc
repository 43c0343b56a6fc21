// ctest-labels: litert webgpu
// bmm-const-lhs, proven on our interpreter and LiteRT.js (wasm), with the
// rewritten graph's numbers checked on LiteRT.js's WebGPU delegate
// (litert-webgpu); its residency is measured by the bmm-const-lhs micro-probe.
#include "gpuclean/builder.h"
#include "gpuclean/synth.h"
#include "rewrite/pass_proof.h"
#include "support/tflite_names.h"

namespace gpuclean::rewrite {
namespace {

using builder::GraphBuilder;
using ::gpuclean::testing::tflite_names::F32;

TEST(BmmConstLhs, MovesTheConstantToTheSecondOperand) {
  GraphBuilder b;
  const int x = b.Input("x", F32, {4, 32, 49});
  const npy::Array c = synth::HashUniform({4, 20, 32}, -1, 1, 91);
  const int q = b.ConstF32("queries", {4, 20, 32}, std::vector<float>(c.as<float>(), c.as<float>() + c.num_elements()));
  b.Output(b.Softmax(b.BatchMatMul(q, x), 1.0f));
  const ir::Model model = b.Finish();
  const std::vector<npy::Array> inputs = {synth::HashUniform({4, 32, 49}, -1, 1, 92)};
  const testing::PassProof proof = testing::ExpectPassProven("bmm-const-lhs", model, inputs);
  EXPECT_EQ(testing::RunOurs(model, inputs)[0].data, testing::RunOurs(proof.rewritten, inputs)[0].data);
  testing::ExpectFindingGone(model, proof.rewritten, "batch-matmul-const-lhs", "mldrift-webgpu@2.5.3");
  EXPECT_GE(testing::WebGpuCorrelations({proof.rewritten}, {inputs}, "fp32")[0], 0.99999);
}

TEST(BmmConstLhs, LeavesAdjointFlagsAlone) {
  GraphBuilder b;
  const int x = b.Input("x", F32, {2, 4, 3});
  const int c = b.ConstF32("c", {2, 4, 5}, std::vector<float>(40, 0.5f));
  b.Output(b.BatchMatMul(c, x, /*adj_x=*/true));
  ir::Model model = b.Finish();
  const PassResult r = FindPass("bmm-const-lhs")->Apply(model, {});
  EXPECT_TRUE(r.sites.empty());
  ASSERT_EQ(r.skipped.size(), 1u);
  EXPECT_NE(r.skipped[0].why.find("adjoint"), std::string::npos);
}

}  // namespace
}  // namespace gpuclean::rewrite
