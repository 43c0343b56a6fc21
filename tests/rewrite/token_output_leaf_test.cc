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

std::vector<std::string> OutputNamesTokenOutputLeaf(const ir::Model& m) {
  std::vector<std::string> names;
  for (int t : m.main().outputs) names.push_back(m.main().tensors[t].name);
  return names;
}

TEST(TokenOutputLeaf, MakesTheProbesTokenOutputASoleLeaf) {
  const ir::Model model = synth::Build("token-output-fanout");
  const testing::PassProof proof =
      testing::ExpectPassProven("token-output-leaf", model, {synth::HashUniform({1, 16, 8}, -4, 4, 41)});
  const ir::Subgraph& g = proof.rewritten.main();
  EXPECT_EQ(OutputNamesTokenOutputLeaf(proof.rewritten), OutputNamesTokenOutputLeaf(model));
  const int out = g.outputs[0];
  EXPECT_TRUE(g.Consumers()[out].empty());
  ASSERT_GE(g.Producer(out), 0);
  EXPECT_EQ(g.ops[g.Producer(out)].code, tfl::BuiltinOperator_MUL);
  // The consumer reads what the RELU writes, not the output buffer.
  const int tokens = g.ops[g.Producer(out)].inputs[0];
  ASSERT_GE(g.Producer(tokens), 0);
  EXPECT_EQ(g.ops[g.Producer(tokens)].code, tfl::BuiltinOperator_RELU);
  EXPECT_EQ(g.Consumers()[tokens].size(), 2u);
  ASSERT_EQ(proof.result.host_inputs.size(), 1u);
  EXPECT_EQ(proof.result.host_inputs[0].value.as<float>()[0], 1.0f);
  EXPECT_EQ(g.tensors[g.inputs.back()].name, proof.result.host_inputs[0].name);
  testing::ExpectFindingGone(model, proof.rewritten, "token-output-fanout");
}

// Encoder-style: two token outputs, each feeding the next block, around a
// 4-D map output that must be left as it is.
TEST(TokenOutputLeaf, HandlesEveryTokenOutputAndKeepsTheOrder) {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 6, 4});
  int w = b.ConstF32("w", {4, 4}, {0.5f, -1, 0.25f, 2, 1, 0, -0.5f, 0.75f, -2, 0.1f, 0.3f, 0, 1, 1, -1, 0.5f});
  int t1 = b.FullyConnected(x, w, builder::kNoInput, builder::kNoActivation, true);
  int map = b.Reshape(t1, {1, 2, 3, 4});
  int t2 = b.Add(t1, x);
  b.Output(t1);
  b.Output(map);
  b.Output(t2);
  b.Output(b.Tanh(t2));
  const ir::Model model = b.Finish();
  const testing::PassProof proof =
      testing::ExpectPassProven("token-output-leaf", model, {synth::HashUniform({1, 6, 4}, -4, 4, 42)}, 2);
  EXPECT_EQ(proof.result.sites.size(), 2u);
  EXPECT_EQ(proof.result.host_inputs.size(), 1u);
  EXPECT_EQ(OutputNamesTokenOutputLeaf(proof.rewritten), OutputNamesTokenOutputLeaf(model));
  for (int out : proof.rewritten.main().outputs) EXPECT_TRUE(proof.rewritten.main().Consumers()[out].empty());
  testing::ExpectFindingGone(model, proof.rewritten, "token-output-fanout");
}

TEST(TokenOutputLeaf, LeavesA4DOutputWithConsumersAlone) {
  ir::Model model = synth::Build("token-output-fanout.ok");
  const PassResult result = FindPass("token-output-leaf")->Apply(model, {});
  EXPECT_TRUE(result.sites.empty());
  EXPECT_EQ(model.main().inputs.size(), 1u);
}

TEST(TokenOutputLeaf, LeavesASoleLeafTokenOutputAlone) {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 16, 8});
  b.Output(b.Relu(x));
  ir::Model model = b.Finish();
  EXPECT_TRUE(FindPass("token-output-leaf")->Apply(model, {}).sites.empty());
  EXPECT_EQ(model.main().ops.size(), 1u);
}

}  // namespace
}  // namespace gpuclean::rewrite
