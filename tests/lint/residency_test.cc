// ctest-labels: slow
#include <filesystem>

#include "gpuclean/format.h"
#include "lint/residency.h"
#include "lint_test_util.h"
#include "support/tflite_names.h"

namespace gpuclean::lint {
namespace {

using builder::GraphBuilder;
using ::gpuclean::testing::tflite_names::F32;

// relu -> gather -> relu: the gather splits the graph in two GPU runs.
ir::Model Sandwich() {
  GraphBuilder b;
  int x = b.Input("x", F32, {4, 8});
  int y = b.Relu(x);
  y = b.Gather(y, b.ConstI32("i", {4}, {3, 2, 1, 0}), 0);
  b.Output(b.Relu6(b.Relu(y)));
  return b.Finish();
}

TEST(Residency, PartitionerGroupsByKindInExecutionOrder) {
  ir::Model m = Sandwich();
  auto subsets = PartitionNodes(m.main(), {true, false, true, true}, nullptr);
  ASSERT_EQ(subsets.size(), 3u);
  EXPECT_EQ(subsets[0], std::vector<int>{0});
  EXPECT_EQ(subsets[1], std::vector<int>{1});
  EXPECT_EQ(subsets[2], (std::vector<int>{2, 3}));
}

TEST(Residency, GpuDelegateKeepsTheLargestPartitionOnly) {
  Report r = testing::LintOn(Sandwich(), "mldrift-webgpu@2.5.3");
  const SubgraphResidency& res = r.residency[0];
  EXPECT_EQ(res.nodes, 4);
  EXPECT_EQ(res.gpu_nodes, 2);
  EXPECT_EQ(res.partitions, 1);
  EXPECT_EQ(PredictedLine(res), "predicted: 2 of 4 nodes on GPU, 1 partition");
  EXPECT_EQ(RuntimeLogLine(res, testing::Target("mldrift-webgpu@2.5.3").residency),
            "2 operations will run on the GPU, and the remaining 2 operations will run on the CPU.");
}

TEST(Residency, XnnpackDelegatesEveryPartition) {
  Report r = testing::LintOn(Sandwich(), "xnnpack");
  EXPECT_EQ(r.residency[0].gpu_nodes, 3);
  EXPECT_EQ(r.residency[0].partitions, 2);
  EXPECT_EQ(r.residency[0].all_partitions, 3);
  EXPECT_EQ(RuntimeLogLine(r.residency[0], testing::Target("xnnpack").residency),
            "Replacing 3 out of 4 node(s) with delegate (TfLiteXNNPackDelegate) node, yielding 3 partitions for the "
            "whole graph.");
}

TEST(Residency, Fp16WeightDequantizeIsFoldedInAFullDelegation) {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 4, 4, 3});
  int w = b.Dequantize(b.ConstF16FromF32("w", {2, 1, 1, 3}, std::vector<float>(6, 0.5f)));
  int bias = b.Dequantize(b.ConstF16FromF32("b", {2}, {0.0f, 1.0f}));
  b.Output(b.Conv2D(x, w, bias, tfl::Padding_SAME, 1, 1));
  Report r = testing::LintOn(b.Finish());
  EXPECT_TRUE(r.findings.empty()) << RenderText(r, testing::Target(kDefaultTarget));
  EXPECT_EQ(r.residency[0].gpu_nodes, 3);
  EXPECT_EQ(r.residency[0].nodes, 3);
}

TEST(Residency, NoOperationsOnTheGpu) {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 2, 3, 4});
  b.Output(b.Reshape(b.Reshape(x, {1, 2, 3, 2, 2}), {1, 2, 3, 4}));
  Report r = testing::LintOn(b.Finish(), "mldrift-webgpu@2.5.3");
  EXPECT_EQ(r.residency[0].gpu_nodes, 0);
  EXPECT_EQ(RuntimeLogLine(r.residency[0], testing::Target("mldrift-webgpu@2.5.3").residency),
            "No operations will run on the GPU, and all 2 operations will run on the CPU.");
}

// The residency line LITERTJS.md records for the sparse face detector on
// LiteRT.js 2.5.3 WebGPU: DENSIFY and its DEQUANTIZEs pull every weight
// DEQUANTIZE onto the CPU, the input PAD forms its own one-node partition,
// and only the largest partition is delegated.
TEST(Residency, SparseFaceDetectorMatchesTheRecordedWebGpuLine) {
  ir::Model m = format::ReadModel(gpuclean::testing::FixtureModel("face_detection_full_range_sparse.tflite"));
  Report r = testing::LintOn(m, "mldrift-webgpu@2.5.3");
  EXPECT_EQ(RuntimeLogLine(r.residency[0], testing::Target("mldrift-webgpu@2.5.3").residency),
            "159 operations will run on the GPU, and the remaining 229 operations will run on the CPU.");
}

}  // namespace
}  // namespace gpuclean::lint
