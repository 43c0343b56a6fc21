// Islands as CPU graphs: every op the GPU cannot take goes into a .tflite
// that LiteRT's CPU path runs - no per-op host-step list decides what can
// be cut - proven against the monolith on the interpreter.
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

// A sampler as detectors write it: scores -> top-K -> the indices broadcast
// over the channels (BROADCAST_TO, which no host step computes) -> a
// GATHER_ND-free take along the proposal axis -> a head on the picked rows.
ir::Model SamplerModel() {
  builder::GraphBuilder b;
  const int x = b.Input("features", tfl::TensorType_FLOAT32, {1, 40, 8});
  std::vector<float> scale(8);
  for (int i = 0; i < 8; ++i) scale[i] = 0.5f + 0.25f * static_cast<float>(i);
  const int feats = b.Tanh(b.Mul(x, b.ConstF32("scale", {8}, scale)));
  const int scores = b.ReduceMax(feats, {2}, false);
  auto [values, indices] = b.TopKV2(scores, 6);
  const int wide = b.BroadcastTo(b.Reshape(indices, {1, 6, 1}), {1, 6, 8});
  const int picked = b.Gather(feats, b.Reshape(indices, {6}), 1);
  std::vector<float> w(64);
  for (int i = 0; i < 64; ++i) w[i] = 0.0625f * static_cast<float>((i * 7) % 11) - 0.25f;
  const int head = b.FullyConnected(picked, b.ConstF32("w", {8, 8}, w), b.ConstF32("bias", {8}, scale),
                                    builder::kNoActivation, /*keep_num_dims=*/true);
  b.Output(head);
  b.Output(values);
  b.Output(b.Cast(wide, tfl::TensorType_FLOAT32));
  return b.Finish();
}

TEST(CpuIslands, OpsWithoutAHostStepGoToACpuGraphAndTheChainIsExact) {
  const ir::Model model = SamplerModel();
  const ir::Subgraph& g = model.main();
  std::string why;
  const int broadcast = OpsOfTypes(g, {"BROADCAST_TO"}).at(0);
  EXPECT_FALSE(IslandCanHold(g, broadcast, Islands::kHostSteps, &why));
  EXPECT_TRUE(IslandCanHold(g, broadcast, Islands::kCpuGraphs, &why)) << why;

  HostCut cut = CutHostIslands(model, OpsOfTypes(g, {"TOPK_V2", "BROADCAST_TO", "GATHER"}), "s", Islands::kCpuGraphs);
  EXPECT_EQ(cut.cpu_graphs, 1);
  std::vector<std::string> placements;
  for (const pipeline::Stage& s : cut.spec.stages) {
    EXPECT_EQ(s.kind, pipeline::Stage::Kind::kGraph) << s.name;
    placements.push_back(s.placement);
  }
  EXPECT_EQ(placements, (std::vector<std::string>{"gpu", "cpu", "gpu"}));
  // The index arithmetic between the selections (RESHAPE of the indices)
  // joins the CPU graph, and so does the CAST of the broadcast indices: it
  // reads island values only and leads only to a graph output. The head's
  // matmul stays on the GPU.
  EXPECT_GE(cut.joined_ops, 1);
  EXPECT_NE(HostStepSummary(cut).find("in 1 CPU graph(s)"), std::string::npos) << HostStepSummary(cut);

  testing::TempDir dir;
  const std::string monolith = dir.file("sampler.tflite");
  format::WriteModel(model, monolith);
  const std::string spec_path = WriteHostCut(cut, dir.file("s"));
  const pipeline::Spec spec = pipeline::LoadSpec(spec_path);
  pipeline::ProveOptions options;
  options.run.seed = 5;
  const pipeline::ProveReport report = pipeline::Prove(spec, monolith, options);
  EXPECT_TRUE(report.passed) << pipeline::RenderProve(report);
  ASSERT_EQ(report.chain.outputs.size(), 3u);
  for (size_t o = 0; o < 3; ++o) EXPECT_EQ(report.chain.outputs[o].data, report.reference[o].data) << "output " << o;

  // Each written graph binds by name: its signature holds the spec's values.
  for (const pipeline::Stage& s : spec.stages) {
    const ir::Model written = format::ReadModel(dir.file(s.graph));
    ASSERT_EQ(written.signatures.size(), 1u) << s.graph;
    std::vector<std::string> in, out;
    for (const auto& r : written.signatures[0].inputs) in.push_back(r.name);
    for (const auto& r : written.signatures[0].outputs) out.push_back(r.name);
    EXPECT_EQ(in, s.inputs) << s.graph;
    EXPECT_EQ(out, s.outputs) << s.graph;
  }
}

TEST(CpuIslands, IndexChainsThatOnlyFeedTheIslandJoinIt) {
  // CAST(float -> int32) whose only reader is the GATHER in the island: the
  // GPU would compute integers for the CPU alone.
  builder::GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 10, 4});
  const int where = b.Input("where", tfl::TensorType_FLOAT32, {3});
  const int index = b.Cast(b.Mul(where, b.ConstF32("nine", {}, {9.0f})), tfl::TensorType_INT32);
  const int rows = b.Gather(b.Tanh(x), index, 1);
  b.Output(b.Add(rows, rows));
  const ir::Model model = b.Finish();
  const ir::Subgraph& g = model.main();
  const int gather = OpsOfTypes(g, {"GATHER"}).at(0);
  const int cast = OpsOfTypes(g, {"CAST"}).at(0);
  const std::vector<int> grown = GrowHostIslands(g, {gather}, Islands::kCpuGraphs);
  EXPECT_NE(std::find(grown.begin(), grown.end(), cast), grown.end());
  // Host steps keep the old rule: only ops fed by island values join.
  const std::vector<int> steps = GrowHostIslands(g, {gather}, Islands::kHostSteps);
  EXPECT_EQ(std::find(steps.begin(), steps.end(), cast), steps.end());

  HostCut cut = CutHostIslands(model, {gather}, "c", Islands::kCpuGraphs);
  testing::TempDir dir;
  format::WriteModel(model, dir.file("c.tflite"));
  pipeline::ProveOptions options;
  options.run.seed = 2;
  const auto report =
      pipeline::Prove(pipeline::LoadSpec(WriteHostCut(cut, dir.file("c"))), dir.file("c.tflite"), options);
  EXPECT_TRUE(report.passed) << pipeline::RenderProve(report);
}

TEST(CpuIslands, RefusesOpsNoCpuGraphCanHold) {
  builder::GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 4});
  b.Output(b.Custom("SomeVendorOp", {x}, {}, {{tfl::TensorType_FLOAT32, {1, 4}}}).at(0));
  const ir::Model model = b.Finish();
  try {
    CutHostIslands(model, {0}, "m", Islands::kCpuGraphs);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_STREQ(
        e.what(),
        "op 0 (SomeVendorOp) cannot run in a CPU graph: it is a custom op, which LiteRT's CPU path does not know");
  }
  EXPECT_EQ(ParseIslands("cpu"), Islands::kCpuGraphs);
  EXPECT_THROW(ParseIslands("gpu"), Error);
}

}  // namespace
}  // namespace gpuclean::split
