// ctest-labels: litert
#include <chrono>

#include "gpuclean/builder.h"
#include "gpuclean/synth.h"
#include "rewrite/graph_edit.h"
#include "rewrite/pass_proof.h"
#include "support/arrays.h"
#include "support/tflite_names.h"

namespace gpuclean::rewrite {
namespace {

using builder::GraphBuilder;
using ::gpuclean::testing::tflite_names::F32;

std::vector<float> RampConstFold(size_t n, float start, float step) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + step * static_cast<float>(i);
  return v;
}

TEST(ConstFold, FoldsTheConstOnlyAddProbe) {
  const ir::Model model = synth::Build("const-only-add");
  const testing::PassProof proof =
      testing::ExpectPassProven("const-fold", model, {testing::F32({1, 4}, {-1.5f, 0.0f, 2.0f, 3.25f})});
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_ADD), 0);
  EXPECT_EQ(proof.rewritten.main().ops.size(), 1u);
  testing::ExpectFindingGone(model, proof.rewritten, "all-const-inputs");
}

TEST(ConstFold, FoldsWeightChainsButLeavesWeightDequantizeToTheDelegate) {
  // As converters emit them: a weight stored [K, O] and transposed in the
  // graph, an fp16 weight dequantized and rescaled, a constant broadcast to
  // the activation shape, and a plain fp16 weight the delegate reads itself.
  GraphBuilder b;
  int x = b.Input("x", F32, {2, 3});
  int w_t = b.Transpose(b.ConstF32("w_kxo", {3, 4}, RampConstFold(12, -1.0f, 0.2f)), {1, 0});
  int scaled = b.Mul(b.Dequantize(b.ConstF16FromF32("w16", {4, 4}, RampConstFold(16, -2.0f, 0.25f))),
                     b.ConstF32("scale", {}, {0.5f}));
  int bias = b.BroadcastTo(b.ConstF32("bias", {1, 4}, {0.5f, -0.5f, 1.0f, 0.0f}), {2, 4});
  int h = b.Add(b.FullyConnected(x, w_t, builder::kNoInput), bias);
  int y = b.FullyConnected(h, scaled, builder::kNoInput);
  int plain = b.Dequantize(b.ConstF16FromF32("v16", {4, 4}, RampConstFold(16, 1.0f, -0.125f)));
  b.Output(b.FullyConnected(y, plain, builder::kNoInput));
  const ir::Model model = b.Finish();
  const testing::PassProof proof = testing::ExpectPassProven(
      "const-fold", model, {testing::F32({2, 3}, {-2.0f, 0.5f, 1.0f, 3.0f, -0.75f, 0.0f})}, 3);
  EXPECT_EQ(proof.result.sites.size(), 3u);
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_TRANSPOSE), 0);
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_BROADCAST_TO), 0);
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_MUL), 0);
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_DEQUANTIZE), 1);
  testing::ExpectFindingGone(model, proof.rewritten, "all-const-inputs");
}

TEST(ConstFold, FoldsTheConstantBroadcastProbe) {
  const ir::Model model = synth::Build("broadcast-to-runtime.ok");
  const testing::PassProof proof =
      testing::ExpectPassProven("const-fold", model, {testing::F32({1, 1, 4}, {-1.0f, 2.0f, 0.25f, -8.0f})});
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_BROADCAST_TO), 0);
  testing::ExpectFindingGone(model, proof.rewritten, "all-const-inputs");
}

TEST(ConstFold, LeavesDensifyAndWeightDequantizeAlone) {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 4});
  std::vector<float> dense(16, 0.0f);
  dense[2] = 1.0f, dense[7] = -3.0f;
  int sparse = b.FullyConnected(x, b.Densify(b.ConstSparseF32("w", {4, 4}, dense)), builder::kNoInput);
  int w16 = b.Dequantize(b.ConstF16FromF32("w16", {4, 4}, RampConstFold(16, 0.0f, 0.5f)));
  b.Output(b.FullyConnected(sparse, w16, builder::kNoInput));
  ir::Model model = b.Finish();
  const size_t ops = model.main().ops.size(), tensors = model.main().tensors.size();
  const PassResult result = FindPass("const-fold")->Apply(model, {});
  EXPECT_TRUE(result.sites.empty());
  EXPECT_EQ(model.main().ops.size(), ops);
  EXPECT_EQ(model.main().tensors.size(), tensors);
}

TEST(ConstFold, ResolvesADeepGraphOnceNotPerTensor) {
  // 20000 runtime ADDs in a chain, then one fed by a constant-only ADD.
  // Asking "constant-valued?" of each tensor by walking back through its
  // producers took depth x ops steps per tensor (the quantized ISNet's 4544
  // ops spent seconds of every fix there); resolved once, it is linear.
  constexpr int kDepth = 20000;
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 4});
  const int one = b.ConstF32("one", {1, 4}, {1, 1, 1, 1});
  for (int i = 0; i < kDepth; ++i) x = b.Add(x, one);
  const int folded = b.Add(b.ConstF32("a", {1, 4}, {1, 2, 3, 4}), b.ConstF32("b", {1, 4}, {4, 3, 2, 1}));
  b.Output(b.Add(x, folded));
  ir::Model model = b.Finish();
  const auto start = std::chrono::steady_clock::now();
  const PassResult result = FindPass("const-fold")->Apply(model, {});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  ASSERT_EQ(result.sites.size(), 1u);
  EXPECT_EQ(testing::CountOps(model, tfl::BuiltinOperator_ADD), kDepth + 1);
  const ir::Subgraph& g = model.main();
  const ir::Op& last = g.ops.at(g.Producer(g.outputs.at(0)));
  EXPECT_TRUE(g.tensors[last.inputs[1]].is_const());
  EXPECT_FALSE(IsConstantValued(g, last.inputs[0]));
  EXPECT_TRUE(IsConstantValued(g, last.inputs[1]));
}

}  // namespace
}  // namespace gpuclean::rewrite
