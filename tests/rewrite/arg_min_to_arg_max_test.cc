// ctest-labels: litert webgpu
#include "gpuclean/builder.h"
#include "rewrite/pass_proof.h"
#include "support/arrays.h"
#include "support/tflite_names.h"

namespace gpuclean::rewrite {
namespace {

using builder::GraphBuilder;
using ::gpuclean::testing::tflite_names::F32;

TEST(ArgMinToArgMax, SameIndexWithTiesAndSignedZerosAndLintIsClean) {
  GraphBuilder b;
  const int x = b.Input("x", F32, {2, 6});
  b.Output(b.Cast(b.ArgMin(x, 1), F32));
  const ir::Model model = b.Finish();
  // Row 0: a tie for the minimum (first wins); row 1: -0 before +0, equal.
  const testing::PassProof proof = testing::ExpectPassProven(
      "arg-min-to-arg-max", model, {testing::F32({2, 6}, {3, -1, 2, -1, 5, 0, 0.0f, -0.0f, 1, 2, 3, 4})}, 1);
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_ARG_MIN), 0);
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_ARG_MAX), 1);
  testing::ExpectFindingGone(model, proof.rewritten, "arg-min", "mldrift-webgpu@2.5.3");
  testing::ExpectFindingGone(model, proof.rewritten, "arg-min", "mldrift-cl@2.2.0");
}

TEST(ArgMinToArgMax, LeavesIntegers) {
  GraphBuilder b;
  b.Output(b.ArgMin(b.Input("x", tfl::TensorType_INT32, {4}), 0));
  ir::Model model = b.Finish();
  EXPECT_TRUE(FindPass("arg-min-to-arg-max")->Apply(model, {}).sites.empty());
  EXPECT_EQ(testing::CountOps(model, tfl::BuiltinOperator_ARG_MIN), 1);
}

}  // namespace
}  // namespace gpuclean::rewrite
