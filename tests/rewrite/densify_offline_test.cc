// ctest-labels: litert
#include "gpuclean/builder.h"
#include "rewrite/pass_proof.h"
#include "support/arrays.h"
#include "support/tflite_names.h"

namespace gpuclean::rewrite {
namespace {

using builder::GraphBuilder;
using ::gpuclean::testing::tflite_names::F32;

ir::Model SparseFullyConnected() {
  GraphBuilder b;
  int x = b.Input("x", F32, {2, 8});
  std::vector<float> dense(32, 0.0f);
  dense[3] = 1.5f, dense[9] = -2.0f, dense[17] = 0.25f, dense[30] = 4.0f;
  b.Output(b.FullyConnected(x, b.Densify(b.ConstSparseF32("w", {4, 8}, dense)), builder::kNoInput));
  return b.Finish();
}

TEST(DensifyOffline, StoresTheDenseWeightsAndDropsDensify) {
  const ir::Model model = SparseFullyConnected();
  const testing::PassProof proof = testing::ExpectPassProven(
      "densify-offline", model, {testing::F32({2, 8}, {1, 2, 3, 4, 5, 6, 7, 8, -1, -2, -3, -4, -5, -6, -7, -8})});
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_DENSIFY), 0);
  EXPECT_EQ(proof.rewritten.main().ops.size(), 1u);
  testing::ExpectFindingGone(model, proof.rewritten, "densify");
}

TEST(DensifyOffline, LeavesAGraphWithoutDensifyAlone) {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 4});
  b.Output(b.Relu(x));
  ir::Model model = b.Finish();
  const PassResult result = FindPass("densify-offline")->Apply(model, {});
  EXPECT_TRUE(result.sites.empty());
  EXPECT_EQ(model.main().ops.size(), 1u);
}

}  // namespace
}  // namespace gpuclean::rewrite
