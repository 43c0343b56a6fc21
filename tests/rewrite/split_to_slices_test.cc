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
using ::gpuclean::testing::tflite_names::I32;

// Each output goes through a different op so a swapped piece shows up.
ir::Model SplitChannels(int32_t axis) {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 3, 4, 6});
  std::vector<int> parts = b.Split(x, axis, 3);
  b.Output(b.Sub(b.Mul(parts[0], parts[0]), parts[1]));
  b.Output(b.Relu(parts[2]));
  return b.Finish();
}

TEST(SplitToSlices, SplitOfChannelsBecomesSlices) {
  const ir::Model model = SplitChannels(3);
  const testing::PassProof proof =
      testing::ExpectPassProven("split-to-slices", model, {synth::HashUniform({1, 3, 4, 6}, -4, 4, 1)});
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_SPLIT), 0);
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_SLICE), 3);
  ASSERT_EQ(proof.result.sites.size(), 1u);
  EXPECT_EQ(proof.result.sites[0].op, "SPLIT");
  testing::ExpectFindingGone(model, proof.rewritten, "split");
}

TEST(SplitToSlices, NegativeAxisCountsFromTheEnd) {
  // -3 on rank 4 is the height axis (3 rows into 3 pieces).
  const ir::Model model = SplitChannels(-3);
  const testing::PassProof proof =
      testing::ExpectPassProven("split-to-slices", model, {synth::HashUniform({1, 3, 4, 6}, -4, 4, 2)});
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_SPLIT), 0);
  EXPECT_EQ(proof.result.sites.at(0).what, "3 SLICEs along axis 1");
}

TEST(SplitToSlices, SplitVWithRemainderBecomesUnequalSlices) {
  GraphBuilder b;
  int x = b.Input("x", F32, {2, 10, 3});
  std::vector<int> parts = b.SplitV(x, {2, -1, 3}, 1);  // 2, 5, 3
  b.Output(parts[2]);
  b.Output(parts[0]);
  b.Output(b.Tanh(parts[1]));
  const ir::Model model = b.Finish();
  const testing::PassProof proof =
      testing::ExpectPassProven("split-to-slices", model, {synth::HashUniform({2, 10, 3}, -4, 4, 3)});
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_SPLIT_V), 0);
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_SLICE), 3);
  EXPECT_EQ(proof.result.sites.at(0).op, "SPLIT_V");
  testing::ExpectFindingGone(model, proof.rewritten, "split-v");
}

TEST(SplitToSlices, RewritesEverySplitInTheGraph) {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 2, 2, 8});
  std::vector<int> halves = b.Split(x, 3, 2);
  std::vector<int> quarters = b.SplitV(halves[1], {1, 3}, 3);
  b.Output(b.Add(halves[0], b.Concatenation({quarters[1], quarters[0]}, 3)));
  const ir::Model model = b.Finish();
  const testing::PassProof proof =
      testing::ExpectPassProven("split-to-slices", model, {synth::HashUniform({1, 2, 2, 8}, -4, 4, 4)}, 2);
  EXPECT_EQ(proof.result.sites.size(), 2u);
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_SPLIT) +
                testing::CountOps(proof.rewritten, tfl::BuiltinOperator_SPLIT_V),
            0);
}

TEST(SplitToSlices, FixesTheSplitProbe) {
  const ir::Model model = synth::Build("split");
  const testing::PassProof proof =
      testing::ExpectPassProven("split-to-slices", model, {synth::HashUniform({1, 4, 4, 8}, -4, 4, 5)});
  testing::ExpectFindingGone(model, proof.rewritten, "split");
}

TEST(SplitToSlices, LeavesASplitWithARuntimeAxisAlone) {
  ir::Model model = SplitChannels(3);
  // A converter that lost the constant feeds the axis from a graph input; the
  // pieces then depend on a value only known at run time.
  ir::Subgraph& g = model.main();
  ir::Tensor axis;
  axis.name = "axis";
  axis.dtype = I32;
  axis.shape = {};
  const int t = g.AddTensor(axis);
  g.inputs.push_back(t);
  for (ir::Op& op : g.ops)
    if (op.code == tfl::BuiltinOperator_SPLIT) op.inputs[0] = t;
  model.RemoveDeadTensors(0);
  const size_t ops = model.main().ops.size();
  const PassResult result = FindPass("split-to-slices")->Apply(model, {});
  EXPECT_TRUE(result.sites.empty());
  EXPECT_EQ(model.main().ops.size(), ops);
  EXPECT_EQ(testing::CountOps(model, tfl::BuiltinOperator_SPLIT), 1);
}

}  // namespace
}  // namespace gpuclean::rewrite
