// split --host: graphs alternating with host steps, proven against the
// monolith on the interpreter (bit for bit: the steps compute as the ops).
#include <algorithm>
#include <filesystem>

#include <gtest/gtest.h>

#include "gpuclean/builder.h"
#include "gpuclean/format.h"
#include "gpuclean/pipeline.h"
#include "gpuclean/split.h"
#include "support/test_support.h"

namespace gpuclean::split {
namespace {

// A two-stage query selection as detectors have it: features -> scores ->
// top-10 -> gather the chosen queries -> a head on them.
ir::Model TwoStageModel() {
  builder::GraphBuilder b;
  const int x = b.Input("features", tfl::TensorType_FLOAT32, {1, 50, 8});
  std::vector<float> scale(8);
  for (int i = 0; i < 8; ++i) scale[i] = 0.5f + 0.25f * static_cast<float>(i);
  const int feats = b.Tanh(b.Mul(x, b.ConstF32("scale", {8}, scale)));
  const int scores = b.ReduceMax(feats, {2}, false);
  auto [values, indices] = b.TopKV2(scores, 10);
  const int chosen = b.Gather(feats, indices, 1, 1);
  const int head = b.Add(b.Mul(chosen, b.ConstF32("w", {8}, scale)), b.ConstF32("bias", {}, {0.125f}));
  b.Output(head);
  b.Output(values);
  return b.Finish();
}

TEST(HostCut, TopKAndGatherBecomeHostStepsBetweenTwoGraphs) {
  const ir::Model model = TwoStageModel();
  const ir::Subgraph& g = model.main();
  const std::vector<int> host = OpsOfTypes(g, {"TOPK_V2", "GATHER"});
  ASSERT_EQ(host.size(), 2u);
  HostCut cut = CutHostIslands(model, host, "m");
  ASSERT_EQ(cut.spec.stages.size(), 4u);
  EXPECT_EQ(cut.spec.stages[0].graph, "m.graph1.tflite");
  EXPECT_EQ(cut.spec.stages[1].host, "topk");
  EXPECT_EQ(cut.spec.stages[1].params["k"], 10);
  EXPECT_EQ(cut.spec.stages[2].host, "gather");
  EXPECT_EQ(cut.spec.stages[2].params["batch_dims"], 1);
  EXPECT_EQ(cut.spec.stages[3].graph, "m.graph2.tflite");
  EXPECT_EQ(cut.graphs.size(), 2u);

  testing::TempDir dir;
  const std::string monolith = dir.file("two_stage.tflite");
  format::WriteModel(model, monolith);
  const std::string spec_path = WriteHostCut(cut, dir.file("m"));
  const pipeline::Spec spec = pipeline::LoadSpec(spec_path);
  pipeline::ProveOptions options;
  options.run.seed = 3;
  const pipeline::ProveReport report = pipeline::Prove(spec, monolith, options);
  EXPECT_TRUE(report.passed) << pipeline::RenderProve(report);
  ASSERT_EQ(report.chain.outputs.size(), 2u);
  for (size_t o = 0; o < 2; ++o) EXPECT_EQ(report.chain.outputs[o].data, report.reference[o].data) << "output " << o;
}

// What converted ONNX GatherElements of top-K indices looks like: the
// indices tiled along the features, wrapped (select(i < 0, i + n, i)) and
// concatenated with constant position grids into GATHER_ND coordinates.
ir::Model GatherElementsOfTopKModel() {
  builder::GraphBuilder b;
  const int x = b.Input("memory", tfl::TensorType_FLOAT32, {1, 10, 3});
  const int feats = b.Tanh(x);
  const int scores = b.ReduceMax(feats, {2}, false);
  auto [values, indices] = b.TopKV2(scores, 4);
  const int tiled = b.Tile(b.Reshape(indices, {1, 4, 1}), {1, 1, 3});
  const int wrapped =
      b.SelectV2(b.Less(tiled, b.ConstI32("zero", {}, {0})), b.Add(tiled, b.ConstI32("n", {}, {10})), tiled);
  std::vector<int32_t> batch(12, 0), column(12);
  for (int i = 0; i < 12; ++i) column[i] = i % 3;
  const int coords = b.Concatenation({b.ConstI32("batch", {1, 4, 3, 1}, batch), b.Reshape(wrapped, {1, 4, 3, 1}),
                                      b.ConstI32("column", {1, 4, 3, 1}, column)},
                                     3);
  const int chosen = b.GatherNd(feats, coords);
  // After the last host op: reads a host value, but leads to no host op.
  const int shifted = b.Add(tiled, b.ConstI32("one", {}, {1}));
  b.Output(b.Mul(chosen, b.ConstF32("w", {}, {2.0f})));
  b.Output(shifted);
  b.Output(values);
  return b.Finish();
}

TEST(HostCut, IndexArithmeticBetweenHostStepsJoinsThem) {
  const ir::Model model = GatherElementsOfTopKModel();
  const ir::Subgraph& g = model.main();
  const std::vector<int> requested = OpsOfTypes(g, {"TOPK_V2", "GATHER_ND"});
  ASSERT_EQ(requested.size(), 2u);
  const std::vector<int> grown = GrowHostIslands(g, requested);
  std::vector<std::string> names;
  for (int i : grown) names.push_back(g.ops[i].name());
  // RESHAPE, TILE, LESS, ADD, SELECT_V2, RESHAPE, CONCATENATION join; TANH
  // and REDUCE_MAX (before) and the ADD and MUL after the host ops stay.
  EXPECT_EQ(grown.size(), 9u) << ::testing::PrintToString(names);
  EXPECT_EQ(std::count(names.begin(), names.end(), "ADD"), 1);
  EXPECT_EQ(std::count(names.begin(), names.end(), "MUL"), 0);
  EXPECT_EQ(std::count(names.begin(), names.end(), "TANH"), 0);

  HostCut cut = CutHostIslands(model, requested, "m");
  EXPECT_EQ(cut.host_ops, 9);
  EXPECT_EQ(cut.joined_ops, 7);
  EXPECT_EQ(HostStepSummary(cut), "9 host step(s) (7 joined between them)");
  ASSERT_EQ(cut.graphs.size(), 2u) << DescribeHostCut(cut.spec);  // one graph before, one after
  testing::TempDir dir;
  const std::string monolith = dir.file("m.tflite");
  format::WriteModel(model, monolith);
  const pipeline::Spec spec = pipeline::LoadSpec(WriteHostCut(cut, dir.file("m")));
  pipeline::ProveOptions options;
  options.run.seed = 5;
  const pipeline::ProveReport report = pipeline::Prove(spec, monolith, options);
  EXPECT_TRUE(report.passed) << pipeline::RenderProve(report);
  for (size_t o = 0; o < report.reference.size(); ++o)
    EXPECT_EQ(report.chain.outputs[o].data, report.reference[o].data) << "output " << o;
}

TEST(HostCut, ConstantsAHostStepReadsAreWrittenBeside) {
  builder::GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {2, 3});
  const int y = b.Exp(x);
  const int z = b.Add(y, b.ConstF32("offset", {3}, {1, 2, 3}));  // on the host: reads a constant
  b.Output(b.Tanh(z));
  const ir::Model model = b.Finish();
  HostCut cut = CutHostIslands(model, OpsOfTypes(model.main(), {"ADD"}), "c");
  ASSERT_EQ(cut.spec.constants.size(), 1u);
  EXPECT_EQ(cut.spec.constants[0].name, "offset");
  testing::TempDir dir;
  format::WriteModel(model, dir.file("c.tflite"));
  const std::string spec_path = WriteHostCut(cut, dir.file("c"));
  EXPECT_TRUE(std::filesystem::exists(dir.file(cut.spec.constants[0].file)));
  const auto report = pipeline::Prove(pipeline::LoadSpec(spec_path), dir.file("c.tflite"), {});
  EXPECT_TRUE(report.passed) << pipeline::RenderProve(report);
}

TEST(HostCut, GraphsAreLintedAndFixedForTheTargetAfterTheCut) {
  // Cut at the top-K, graph 1 outputs the [1,50,8] features it also reads:
  // a 3-D token tensor with a second consumer, which token-output-leaf mends.
  HostCut cut = CutHostIslands(TwoStageModel(), OpsOfTypes(TwoStageModel().main(), {"TOPK_V2", "GATHER"}), "m");
  const std::vector<GraphCleanup> cleanup = CleanGraphs(cut, "mldrift-webgpu@2.5.3");
  ASSERT_EQ(cleanup.size(), 2u);
  EXPECT_EQ(cleanup[0].errors_before, 1) << DescribeCleanup(cleanup, "mldrift-webgpu@2.5.3");
  EXPECT_EQ(ErrorsLeft(cleanup), 0) << DescribeCleanup(cleanup, "mldrift-webgpu@2.5.3");
  ASSERT_EQ(cleanup[0].passes.size(), 1u);
  EXPECT_EQ(cleanup[0].passes[0], "token-output-leaf (1 site(s))");
  // The rewrite's host-fed "one" is a pipeline constant of graph 1.
  EXPECT_EQ(cut.spec.stages[0].inputs.back(), "graph1:token-output-leaf/one");
  ASSERT_EQ(cut.spec.constants.size(), 1u);
  EXPECT_EQ(cut.spec.constants[0].file, "m.const.graph1_token-output-leaf_one.npy");

  testing::TempDir dir;
  const std::string monolith = dir.file("two_stage.tflite");
  format::WriteModel(TwoStageModel(), monolith);
  const pipeline::Spec spec = pipeline::LoadSpec(WriteHostCut(cut, dir.file("m")));
  pipeline::ProveOptions options;
  options.run.seed = 4;
  const pipeline::ProveReport report = pipeline::Prove(spec, monolith, options);
  EXPECT_TRUE(report.passed) << pipeline::RenderProve(report);
}

TEST(HostCut, GraphsTheInterpreterCannotRunAreLintedOnly) {
  builder::GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 8});
  auto [values, indices] = b.TopKV2(b.Tanh(x), 3);
  // Graph 2 needs a rewrite (a [1,3,4] token output also read by the next
  // op), but proving it needs a run, and no interpreter knows the op.
  const int tokens = b.Tile(b.Reshape(values, {1, 3, 1}), {1, 1, 4});
  const int mystery = b.Custom("SomeVendorOp", {tokens}, {}, {{tfl::TensorType_FLOAT32, {1, 3, 4}}}).at(0);
  b.Output(tokens);
  b.Output(mystery);
  b.Output(indices);
  const ir::Model model = b.Finish();
  HostCut cut = CutHostIslands(model, OpsOfTypes(model.main(), {"TOPK_V2"}), "m");
  const std::vector<GraphCleanup> cleanup = CleanGraphs(cut, "mldrift-webgpu@2.5.3");
  ASSERT_EQ(cleanup.size(), 2u);
  EXPECT_TRUE(cleanup[0].failure.empty()) << cleanup[0].failure;
  EXPECT_FALSE(cleanup[1].failure.empty());
  EXPECT_EQ(cleanup[1].errors_before, cleanup[1].errors_after);
  EXPECT_NE(DescribeCleanup(cleanup, "mldrift-webgpu@2.5.3").find("lint m.graph2.tflite"), std::string::npos)
      << DescribeCleanup(cleanup, "mldrift-webgpu@2.5.3");
  EXPECT_NE(cleanup[1].failure.find("SomeVendorOp"), std::string::npos) << cleanup[1].failure;
}

TEST(HostCut, RefusesOpsNoHostStepComputesExactly) {
  builder::GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 4});
  b.Output(b.Add(x, x, tfl::ActivationFunctionType_RELU));
  const ir::Model model = b.Finish();
  std::string why;
  EXPECT_FALSE(HostStepFor(model.main(), 0, &why));
  EXPECT_EQ(why, "it has a fused activation");
  try {
    CutHostIslands(model, {0}, "m");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_STREQ(e.what(), "op 0 (ADD) cannot run on the host: it has a fused activation");
  }
  EXPECT_THROW(OpsOfTypes(model.main(), {"TOPK"}), Error);
}

TEST(HostCut, CliHostAutoMovesWhatTheTargetRejectsAndProvesIt) {
  testing::TempDir dir;
  const std::string monolith = dir.file("two_stage.tflite");
  format::WriteModel(TwoStageModel(), monolith);
  const auto r =
      testing::RunGpuclean("split " + monolith + " --host auto --target mldrift-webgpu@2.5.3 -o " + dir.file("auto"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("host  topk {\"k\":10}"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("verdict: PASS"), std::string::npos) << r.out;
  const auto run =
      testing::RunGpuclean("pipeline run " + dir.file("auto.pipeline.json") + " -q --out " + dir.file("run"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(std::filesystem::exists(dir.file("run/meta.json")));
  const auto both = testing::RunGpuclean("split " + monolith + " --host TOPK_V2 --at x -o " + dir.file("b"));
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("exactly one of --at"), std::string::npos) << both.err;
}

}  // namespace
}  // namespace gpuclean::split
