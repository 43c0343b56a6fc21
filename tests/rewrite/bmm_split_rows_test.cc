// ctest-labels: litert webgpu
// bmm-split-rows, proven on our interpreter and LiteRT.js (wasm), and
// measured on LiteRT.js's WebGPU delegate: a BATCH_MATMUL whose second
// operand holds 32832 rows returns zeros there, the one at 32736 rows and
// the chunked rewrite are right.
#include "gpuclean/builder.h"
#include "gpuclean/synth.h"
#include "rewrite/pass_proof.h"
#include "support/tflite_names.h"

namespace gpuclean::rewrite {
namespace {

using builder::GraphBuilder;
using ::gpuclean::testing::targets::kWebGpu;
using ::gpuclean::testing::tflite_names::F32;

ir::Model Attention(int batch, int m, int k, int n, bool adj_y = false) {
  GraphBuilder b;
  const int x = b.Input("x", F32, {batch, m, k});
  const int y = b.Input("y", F32, adj_y ? std::vector<int32_t>{batch, n, k} : std::vector<int32_t>{batch, k, n});
  b.Output(b.BatchMatMul(b.Tanh(x), y, false, adj_y));
  return b.Finish();
}

std::vector<npy::Array> Inputs(const ir::Model& model) {
  std::vector<npy::Array> in;
  uint32_t seed = 91;
  for (int t : model.main().inputs) {
    std::vector<int64_t> shape(model.main().tensors[t].shape.begin(), model.main().tensors[t].shape.end());
    in.push_back(synth::HashUniform(shape, -1, 1, seed++));
  }
  return in;
}

TEST(BmmSplitRows, ChunksTheBatchAndFixesWebGpu) {
  const ir::Model wrong = Attention(342, 4, 96, 16), right = Attention(341, 4, 96, 16);
  EXPECT_EQ(testing::CountFindings(right, "bmm-rhs-rows", kWebGpu), 0);
  const std::vector<npy::Array> inputs = Inputs(wrong);
  const testing::PassProof proof = testing::ExpectPassProven("bmm-split-rows", wrong, inputs);
  EXPECT_EQ(testing::RunOurs(wrong, inputs)[0].data, testing::RunOurs(proof.rewritten, inputs)[0].data);
  testing::ExpectFindingGone(wrong, proof.rewritten, "bmm-rhs-rows", kWebGpu);
  const std::vector<double> corr =
      testing::WebGpuCorrelations({wrong, right, proof.rewritten}, {inputs, Inputs(right), inputs}, "fp32");
  EXPECT_LT(corr[0], 0.5) << "past 32768 rows was measured all zeros; if this now holds, re-measure the matrix entry";
  EXPECT_GE(corr[1], 0.9999);
  EXPECT_GE(corr[2], 0.9999);
}

// One matrix past the limit: the contraction is split and the partial
// products added; with adj_y, the output columns are concatenated.
TEST(BmmSplitRows, SplitsTheRowsOfOneMatrix) {
  const ir::Model contraction = Attention(1, 3, 40000, 4);
  testing::ExpectPassProven("bmm-split-rows", contraction, Inputs(contraction));
  const ir::Model columns = Attention(1, 3, 8, 40000, true);
  const testing::PassProof proof = testing::ExpectPassProven("bmm-split-rows", columns, Inputs(columns));
  EXPECT_EQ(testing::RunOurs(columns, Inputs(columns))[0].data,
            testing::RunOurs(proof.rewritten, Inputs(columns))[0].data);
}

}  // namespace
}  // namespace gpuclean::rewrite
