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

std::vector<std::string> OutputNamesAddOutputAlias(const ir::Model& m) {
  std::vector<std::string> names;
  for (int t : m.main().outputs) names.push_back(m.main().tensors[t].name);
  return names;
}

// The tensor named `name`, or -1.
int Named(const ir::Model& m, const std::string& name) {
  for (size_t i = 0; i < m.main().tensors.size(); ++i)
    if (m.main().tensors[i].name == name) return static_cast<int>(i);
  return -1;
}

// An accumulator update whose sum is the middle output and feeds two ops.
ir::Model Accumulator(builder::Activation act = builder::kNoActivation) {
  GraphBuilder b;
  int acc = b.Input("acc", F32, {1, 2, 4});
  int delta = b.Input("delta", F32, {1, 2, 4});
  int first = b.Relu(delta);
  int sum = b.Add(acc, delta, act);
  b.Output(first);
  b.Output(sum);
  b.Output(b.Mul(sum, delta));
  b.Output(b.Logistic(sum));
  return b.Finish();
}

std::vector<npy::Array> AccumulatorInputs() {
  std::vector<float> a(8), d(8);
  for (int i = 0; i < 8; ++i) a[i] = -1.5f + 0.4f * static_cast<float>(i), d[i] = (i % 2 ? -0.7f : 0.9f) * (i + 1);
  return {testing::F32({1, 2, 4}, a), testing::F32({1, 2, 4}, d)};
}

TEST(AddOutputAlias, OutputsSumTimesOneAndKeepsTheSumForConsumers) {
  const ir::Model model = Accumulator();
  const testing::PassProof proof = testing::ExpectPassProven("add-output-alias", model, AccumulatorInputs());
  const ir::Subgraph& g = proof.rewritten.main();
  // Same outputs, same order, same names.
  EXPECT_EQ(OutputNamesAddOutputAlias(proof.rewritten), OutputNamesAddOutputAlias(model));
  // The output slot is a MUL by the new input; the ADD is no output any more.
  const int out = g.outputs[1];
  const int producer = g.Producer(out);
  ASSERT_GE(producer, 0);
  EXPECT_EQ(g.ops[producer].code, tfl::BuiltinOperator_MUL);
  const int sum = g.ops[producer].inputs[0];
  ASSERT_GE(g.Producer(sum), 0);
  EXPECT_EQ(g.ops[g.Producer(sum)].code, tfl::BuiltinOperator_ADD);
  EXPECT_FALSE(g.IsGraphOutput(sum));
  EXPECT_EQ(g.Consumers()[sum].size(), 3u);  // the two old consumers and the leaf MUL
  EXPECT_TRUE(g.Consumers()[out].empty());
  // One new graph input, fed 1.0 by the host.
  ASSERT_EQ(proof.result.host_inputs.size(), 1u);
  EXPECT_EQ(g.inputs.size(), 3u);
  EXPECT_EQ(g.tensors[g.inputs[2]].name, proof.result.host_inputs[0].name);
  EXPECT_EQ(proof.result.host_inputs[0].value.shape, (std::vector<int64_t>{1}));
  EXPECT_EQ(proof.result.host_inputs[0].value.as<float>()[0], 1.0f);
  testing::ExpectFindingGone(model, proof.rewritten, "add-output-alias");
}

TEST(AddOutputAlias, KeepsTheAddsFusedActivation) {
  const ir::Model model = Accumulator(tfl::ActivationFunctionType_RELU);
  const testing::PassProof proof = testing::ExpectPassProven("add-output-alias", model, AccumulatorInputs());
  EXPECT_EQ(OutputNamesAddOutputAlias(proof.rewritten), OutputNamesAddOutputAlias(model));
  testing::ExpectFindingGone(model, proof.rewritten, "add-output-alias");
}

TEST(AddOutputAlias, SharesOneInputBetweenSites) {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 4});
  int y = b.Input("y", F32, {1, 4});
  int s1 = b.Add(x, y);
  int s2 = b.Add(s1, y);
  b.Output(s1);
  b.Output(s2);
  b.Output(b.Relu(s2));
  const ir::Model model = b.Finish();
  const testing::PassProof proof = testing::ExpectPassProven(
      "add-output-alias", model, {testing::F32({1, 4}, {1, -2, 3, -4}), testing::F32({1, 4}, {-0.5f, 2, 0.25f, 8})}, 2);
  EXPECT_EQ(proof.result.sites.size(), 2u);
  EXPECT_EQ(proof.result.host_inputs.size(), 1u);
  EXPECT_EQ(proof.rewritten.main().inputs.size(), 3u);
  EXPECT_EQ(OutputNamesAddOutputAlias(proof.rewritten), OutputNamesAddOutputAlias(model));
  EXPECT_GE(Named(proof.rewritten, "add-output-alias/one"), 0);
  testing::ExpectFindingGone(model, proof.rewritten, "add-output-alias");
}

TEST(AddOutputAlias, LeavesASoleLeafAddAlone) {
  ir::Model model = synth::Build("add-output-alias.ok");
  const PassResult result = FindPass("add-output-alias")->Apply(model, {});
  EXPECT_TRUE(result.sites.empty());
  EXPECT_TRUE(result.host_inputs.empty());
  EXPECT_EQ(model.main().inputs.size(), 2u);
}

TEST(AddOutputAlias, LeavesAnAddOfAConstantAlone) {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 4});
  int s = b.Add(x, b.ConstF32("bias", {4}, {1, 2, 3, 4}));
  b.Output(s);
  b.Output(b.Relu(s));
  ir::Model model = b.Finish();
  EXPECT_TRUE(FindPass("add-output-alias")->Apply(model, {}).sites.empty());
  EXPECT_EQ(model.main().inputs.size(), 1u);
}

TEST(AddOutputAlias, FixesTheMicroProbe) {
  const ir::Model model = synth::Build("add-output-alias");
  const testing::PassProof proof = testing::ExpectPassProven(
      "add-output-alias", model, {synth::HashUniform({1, 8}, -4, 4, 21), synth::HashUniform({1, 8}, -4, 4, 22)});
  EXPECT_EQ(OutputNamesAddOutputAlias(proof.rewritten), OutputNamesAddOutputAlias(model));
  testing::ExpectFindingGone(model, proof.rewritten, "add-output-alias");
}

}  // namespace
}  // namespace gpuclean::rewrite
