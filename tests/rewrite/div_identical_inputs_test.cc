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
const npy::Array kXDivIdenticalInputs = testing::F32({1, 4}, {-3.5f, -0.25f, 0.125f, 7.0f});
const npy::Array kY = testing::F32({1, 4}, {2.0f, -1.0f, 0.5f, -6.0f});

TEST(DivIdenticalInputs, ProbeOutputStaysRuntimeValued) {
  // The DIV is the graph output: a constant output would be no graph at all.
  const ir::Model model = synth::Build("div-same-tensor");
  const testing::PassProof proof = testing::ExpectPassProven("div-identical-inputs", model, {kXDivIdenticalInputs, kY});
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_DIV), 0);
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_MUL), 1);
  testing::ExpectFindingGone(model, proof.rewritten, "div-identical-inputs");
  EXPECT_EQ(testing::CountFindings(proof.rewritten, "all-const-inputs"), 0);
}

TEST(DivIdenticalInputs, StoresOnesWhereTheConsumerKeepsARuntimeInput) {
  // A normaliser written as y * (x / x), as traced sign/mask code emits it.
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 4});
  int y = b.Input("y", F32, {1, 4});
  b.Output(b.Mul(y, b.Div(x, x)));
  const ir::Model model = b.Finish();
  const testing::PassProof proof = testing::ExpectPassProven("div-identical-inputs", model, {kXDivIdenticalInputs, kY});
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_DIV), 0);
  EXPECT_EQ(proof.rewritten.main().ops.size(), 1u);  // only the MUL, by a stored 1
  testing::ExpectFindingGone(model, proof.rewritten, "div-identical-inputs");
  EXPECT_EQ(testing::CountFindings(proof.rewritten, "all-const-inputs"), 0);
}

TEST(DivIdenticalInputs, NeverLeavesAConsumerWithConstantsOnly) {
  // (x / x) + bias: a stored 1 would make the ADD constant-only.
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 4});
  int sum = b.Add(b.Div(x, x), b.ConstF32("bias", {1, 4}, {0.5f, -1.0f, 2.0f, 0.0f}));
  b.Output(b.Mul(sum, x));
  const ir::Model model = b.Finish();
  const testing::PassProof proof = testing::ExpectPassProven("div-identical-inputs", model, {kXDivIdenticalInputs});
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_DIV), 0);
  testing::ExpectFindingGone(model, proof.rewritten, "div-identical-inputs");
  EXPECT_EQ(testing::CountFindings(proof.rewritten, "all-const-inputs"), 0);
}

TEST(DivIdenticalInputs, LeavesDivOfTwoTensorsAlone) {
  ir::Model model = synth::Build("div-same-tensor.ok");
  const PassResult result = FindPass("div-identical-inputs")->Apply(model, {});
  EXPECT_TRUE(result.sites.empty());
  EXPECT_EQ(testing::CountOps(model, tfl::BuiltinOperator_DIV), 1);
}

}  // namespace
}  // namespace gpuclean::rewrite
