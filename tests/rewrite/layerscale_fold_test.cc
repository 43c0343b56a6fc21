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

std::vector<float> RampLayerscaleFold(size_t n, float lo, float step) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = lo + step * static_cast<float>(i % 11) - 0.01f * static_cast<float>(i % 7);
  return v;
}

// x [rows, 6] -> FC to 4 channels -> MUL by gamma of shape `gamma_shape`.
ir::Model LayerScale(const builder::Shape& gamma_shape, const std::vector<float>& gamma, bool with_bias,
                     builder::Activation fc_act = builder::kNoActivation) {
  GraphBuilder b;
  int x = b.Input("x", F32, {3, 6});
  int w = b.ConstF32("w", {4, 6}, RampLayerscaleFold(24, -0.5f, 0.1f));
  int bias = with_bias ? b.ConstF32("b", {4}, {0.25f, -0.5f, 1.0f, -2.0f}) : builder::kNoInput;
  int y = b.FullyConnected(x, w, bias, fc_act);
  b.Output(b.Mul(y, b.ConstF32("gamma", gamma_shape, gamma)));
  return b.Finish();
}

npy::Array SignedInput() {
  std::vector<float> v(18);
  for (size_t i = 0; i < v.size(); ++i) v[i] = (i % 2 ? -1.0f : 1.0f) * (0.3f + 0.2f * static_cast<float>(i));
  return testing::F32({3, 6}, v);
}

TEST(LayerScaleFold, FoldsAChannelGammaIntoWeightsAndBias) {
  const ir::Model model = LayerScale({4}, {0.1f, -0.2f, 0.5f, 2.0f}, true);
  const testing::PassProof proof = testing::ExpectPassProven("layerscale-fold", model, {SignedInput()});
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_MUL), 0);
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_FULLY_CONNECTED), 1);
  testing::ExpectFindingGone(model, proof.rewritten, "layerscale-after-fc");
}

TEST(LayerScaleFold, CreatesABiasWhenTheFcHasNone) {
  const ir::Model model = LayerScale({1, 4}, {0.1f, -0.2f, 0.5f, 2.0f}, false);
  const testing::PassProof proof = testing::ExpectPassProven("layerscale-fold", model, {SignedInput()});
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_MUL), 0);
  const ir::Op& fc = proof.rewritten.main().ops.at(0);
  ASSERT_EQ(fc.inputs.size(), 3u);
  EXPECT_GE(fc.inputs[2], 0);
  testing::ExpectFindingGone(model, proof.rewritten, "layerscale-after-fc");
}

// A [1,1,C] gamma lifts the product to rank 3; the fold reshapes to keep it.
TEST(LayerScaleFold, KeepsTheRankA3DGammaProduces) {
  const ir::Model model = LayerScale({1, 1, 4}, {0.1f, 0.2f, 0.5f, 2.0f}, true);
  ASSERT_EQ(model.main().tensors[model.main().outputs[0]].shape, (std::vector<int32_t>{1, 3, 4}));
  const testing::PassProof proof = testing::ExpectPassProven("layerscale-fold", model, {SignedInput()});
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_MUL), 0);
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_RESHAPE), 1);
  testing::ExpectFindingGone(model, proof.rewritten, "layerscale-after-fc");
}

TEST(LayerScaleFold, FoldsThroughAFusedReluWhenGammaIsPositive) {
  const ir::Model model = LayerScale({4}, {0.1f, 0.2f, 0.5f, 2.0f}, true, tfl::ActivationFunctionType_RELU);
  const testing::PassProof proof = testing::ExpectPassProven("layerscale-fold", model, {SignedInput()});
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_MUL), 0);
}

TEST(LayerScaleFold, LeavesAFusedReluWithANegativeGammaAlone) {
  ir::Model model = LayerScale({4}, {0.1f, -0.2f, 0.5f, 2.0f}, true, tfl::ActivationFunctionType_RELU);
  const PassResult result = FindPass("layerscale-fold")->Apply(model, {});
  EXPECT_TRUE(result.sites.empty());
  EXPECT_EQ(testing::CountOps(model, tfl::BuiltinOperator_MUL), 1);
}

// The FC output is read by a second op: scaling its weights would change that
// op's input too.
TEST(LayerScaleFold, LeavesAnFcWithAnotherConsumerAlone) {
  GraphBuilder b;
  int x = b.Input("x", F32, {3, 6});
  int y = b.FullyConnected(x, b.ConstF32("w", {4, 6}, RampLayerscaleFold(24, -0.5f, 0.1f)), builder::kNoInput);
  b.Output(b.Mul(y, b.ConstF32("gamma", {4}, {0.1f, 0.2f, 0.3f, 0.4f})));
  b.Output(b.Relu(y));
  ir::Model model = b.Finish();
  const PassResult result = FindPass("layerscale-fold")->Apply(model, {});
  EXPECT_TRUE(result.sites.empty());
  EXPECT_EQ(testing::CountOps(model, tfl::BuiltinOperator_MUL), 1);
}

TEST(LayerScaleFold, LeavesARuntimeGammaAlone) {
  GraphBuilder b;
  int x = b.Input("x", F32, {3, 6});
  int gamma = b.Input("gamma", F32, {4});
  b.Output(b.Mul(b.FullyConnected(x, b.ConstF32("w", {4, 6}, RampLayerscaleFold(24, -0.5f, 0.1f)), builder::kNoInput),
                 gamma));
  ir::Model model = b.Finish();
  EXPECT_TRUE(FindPass("layerscale-fold")->Apply(model, {}).sites.empty());
}

TEST(LayerScaleFold, FixesTheMicroProbe) {
  const ir::Model model = synth::Build("layerscale-fc");
  const npy::Array x = synth::HashUniform({8, 16}, -2, 2, 11);
  const testing::PassProof proof = testing::ExpectPassProven("layerscale-fold", model, {x});
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_MUL), 0);
  testing::ExpectFindingGone(model, proof.rewritten, "layerscale-after-fc");
}

}  // namespace
}  // namespace gpuclean::rewrite
