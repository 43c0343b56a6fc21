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

npy::Array RampBroadcastToFold(std::vector<int64_t> shape, float start, float step) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = start + step * static_cast<float>(i);
  return testing::F32(std::move(shape), v);
}

TEST(BroadcastToFold, RepeatsARuntimeTensorInTheProbe) {
  const ir::Model model = synth::Build("broadcast-to-runtime");
  const testing::PassProof proof =
      testing::ExpectPassProven("broadcast-to-fold", model, {testing::F32({1, 1, 4}, {-1.0f, 2.5f, 0.0f, -7.0f})});
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_BROADCAST_TO), 0);
  EXPECT_GE(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_CONCATENATION), 1);
  testing::ExpectFindingGone(model, proof.rewritten, "broadcast-to-runtime");
}

TEST(BroadcastToFold, RaisesTheRankAndRepeatsSeveralAxes) {
  // A [S] position row and a [1,1,S,1] mask broadcast to attention shapes,
  // as torch's expand() lowers; 7 and 5 are not powers of two. Their readers
  // (a RESHAPE, a graph output) do not broadcast, so the copies are made.
  GraphBuilder b;
  int row = b.Input("row", F32, {4});
  int mask = b.Input("mask", F32, {1, 1, 5, 1});
  int q = b.Input("q", F32, {2, 7, 5, 4});
  int a = b.Mul(q, b.Reshape(b.BroadcastTo(row, {2, 7, 5, 4}), {2, 7, 5, 4}));
  b.Output(a);
  b.Output(b.BroadcastTo(mask, {2, 7, 5, 4}));
  const ir::Model model = b.Finish();
  const testing::PassProof proof =
      testing::ExpectPassProven("broadcast-to-fold", model,
                                {RampBroadcastToFold({4}, -1.5f, 1.0f), RampBroadcastToFold({1, 1, 5, 1}, 3.0f, -2.0f),
                                 RampBroadcastToFold({2, 7, 5, 4}, -10.0f, 0.0625f)},
                                2);
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_BROADCAST_TO), 0);
  for (const ir::Tensor& t : proof.rewritten.main().tensors) EXPECT_LE(t.rank(), 4) << t.name;
  testing::ExpectFindingGone(model, proof.rewritten, "broadcast-to-runtime");
}

// ONNX Expand feeding a Mul and a Sub: the readers broadcast anyway, so
// the BROADCAST_TO goes and no copy is made.
TEST(BroadcastToFold, DropsABroadcastItsReadersMakeThemselves) {
  GraphBuilder b;
  int row = b.Input("row", F32, {1, 1, 4});
  int q = b.Input("q", F32, {2, 7, 4});
  int expanded = b.BroadcastTo(row, {2, 7, 4});
  b.Output(b.Sub(b.Mul(q, expanded), expanded));
  const ir::Model model = b.Finish();
  const testing::PassProof proof = testing::ExpectPassProven(
      "broadcast-to-fold", model,
      {RampBroadcastToFold({1, 1, 4}, -1.5f, 1.0f), RampBroadcastToFold({2, 7, 4}, -3.0f, 0.125f)});
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_BROADCAST_TO), 0);
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_CONCATENATION), 0);
  EXPECT_EQ(proof.rewritten.main().ops.size(), 2u);
  testing::ExpectFindingGone(model, proof.rewritten, "broadcast-to-runtime");
}

TEST(BroadcastToFold, StoresABroadcastConstant) {
  // Lint calls this one all-const-inputs, not broadcast-to-runtime.
  const ir::Model model = synth::Build("broadcast-to-runtime.ok");
  EXPECT_EQ(testing::CountFindings(model, "broadcast-to-runtime"), 0);
  const testing::PassProof proof =
      testing::ExpectPassProven("broadcast-to-fold", model, {testing::F32({1, 1, 4}, {-1.0f, 2.0f, 0.25f, -8.0f})});
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_BROADCAST_TO), 0);
  EXPECT_EQ(proof.rewritten.main().ops.size(), 1u);
  testing::ExpectFindingGone(model, proof.rewritten, "all-const-inputs");
}

TEST(BroadcastToFold, LeavesARank5BroadcastAlone) {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 1, 2, 1, 4});
  b.Output(b.BroadcastTo(x, {1, 3, 2, 2, 4}));
  ir::Model model = b.Finish();
  const PassResult result = FindPass("broadcast-to-fold")->Apply(model, {});
  EXPECT_TRUE(result.sites.empty());
  EXPECT_EQ(testing::CountOps(model, tfl::BuiltinOperator_BROADCAST_TO), 1);
}

}  // namespace
}  // namespace gpuclean::rewrite
