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

// A TensorFlow classifier tail: global pooling keeps [1,1,1,C], SQUEEZE
// drops the spatial axes for the dense layer, and an EXPAND_DIMS puts a
// token axis back.
ir::Model ClassifierTail() {
  GraphBuilder b;
  const int x = b.Input("x", F32, {1, 4, 4, 8});
  const int pooled = b.Mean(x, {1, 2}, true);
  const int flat = b.Squeeze(pooled, {1, 2});
  std::vector<float> w(24);
  for (size_t i = 0; i < w.size(); ++i) w[i] = -1.0f + 0.1f * static_cast<float>(i);
  const int logits = b.FullyConnected(flat, b.ConstF32("w", {3, 8}, w), -1);
  b.Output(b.ExpandDims(logits, 1));
  return b.Finish();
}

TEST(SqueezeToReshape, ReshapesBothAndLintIsClean) {
  const ir::Model model = ClassifierTail();
  const testing::PassProof proof =
      testing::ExpectPassProven("squeeze-to-reshape", model, {synth::HashUniform({1, 4, 4, 8}, -2, 2, 7)}, 2);
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_SQUEEZE), 0);
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_EXPAND_DIMS), 0);
  EXPECT_EQ(proof.rewritten.main().tensors[proof.rewritten.main().outputs[0]].shape, (std::vector<int32_t>{1, 1, 3}));
  for (const char* target : {"mldrift-webgpu@2.5.3", "mldrift-cl@2.2.0"}) {
    testing::ExpectFindingGone(model, proof.rewritten, "squeeze", target);
    testing::ExpectFindingGone(model, proof.rewritten, "expand-dims", target);
  }
}

TEST(SqueezeToReshape, LeavesDynamicShapesWithAReason) {
  GraphBuilder b;
  const int x = b.Input("x", F32, {1, 1, 8});
  b.Output(b.Squeeze(x, {1}));
  ir::Model model = b.Finish();
  ir::Tensor& in = model.main().tensors[model.main().inputs[0]];
  in.shape_signature = {-1, 1, 8};
  const PassResult result = FindPass("squeeze-to-reshape")->Apply(model, {});
  EXPECT_TRUE(result.sites.empty());
  ASSERT_EQ(result.skipped.size(), 1u);
  EXPECT_NE(result.skipped[0].why.find("dynamic"), std::string::npos);
  EXPECT_EQ(testing::CountOps(model, tfl::BuiltinOperator_SQUEEZE), 1);
}

}  // namespace
}  // namespace gpuclean::rewrite
