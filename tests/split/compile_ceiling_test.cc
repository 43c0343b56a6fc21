// A GPU graph past a delegate's whole-graph compile ceiling (Mali fails to
// compile ~1000-node graphs that compile in halves) is cut into consecutive
// GPU graphs under it; the chain still reproduces the monolith bit for bit.
#include <filesystem>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "gpuclean/builder.h"
#include "gpuclean/format.h"
#include "gpuclean/pipeline.h"
#include "gpuclean/split.h"
#include "support/test_support.h"

namespace gpuclean::split {
namespace {

// 1200 elementwise ops with a skip connection every 100, then a top-K.
ir::Model LongChain() {
  builder::GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 64});
  int v = x, skip = x;
  for (int i = 0; i < 600; ++i) {
    v = b.Mul(v, b.ConstF32(fmt::format("s{}", i), {}, {0.999f}));
    v = b.Add(v, b.ConstF32(fmt::format("b{}", i), {}, {0.001f}));
    if (i % 50 == 49) v = b.Add(v, skip), skip = v;
  }
  auto [values, indices] = b.TopKV2(v, 5);
  b.Output(v);
  b.Output(values);
  b.Output(indices);
  return b.Finish();
}

TEST(CompileCeiling, CutByOrderKeepsEveryPartUnderTheLimit) {
  const ir::Model model = LongChain();
  const std::vector<Part> parts = CutByOrder(model, 500);
  ASSERT_EQ(parts.size(), 3u);
  for (const Part& p : parts) EXPECT_LE(p.ops, 500);
  const Proof proof = ProveChain(model, parts, 3);
  EXPECT_TRUE(proof.bit_exact) << (proof.mismatches.empty() ? "" : proof.mismatches[0]);
  EXPECT_EQ(CutByOrder(model, 100000).size(), 1u);
  EXPECT_THROW(CutByOrder(model, 0), Error);
}

TEST(CompileCeiling, GpuGraphsPastTheCeilingAreSplitAndTheChainIsExact) {
  const ir::Model model = LongChain();
  HostCut cut = CutHostIslands(model, OpsOfTypes(model.main(), {"TOPK_V2"}), "c", Islands::kCpuGraphs);
  ASSERT_EQ(cut.spec.stages.size(), 2u);  // the GPU chain, the CPU top-K
  const std::optional<int> ceiling = CompileCeiling("mldrift-cl@2.2.0");
  ASSERT_TRUE(ceiling.has_value());
  EXPECT_EQ(*ceiling, 1000);
  EXPECT_FALSE(CompileCeiling("mldrift-webgpu@2.5.3").has_value());  // WebGPU removes the rule
  const std::vector<std::string> lines = SplitAtCompileCeiling(cut, *ceiling);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("split into 2 GPU graphs under the compile ceiling of 1000"), std::string::npos) << lines[0];
  std::vector<std::string> names;
  for (const pipeline::Stage& s : cut.spec.stages) names.push_back(s.name + ":" + s.placement);
  EXPECT_EQ(names, (std::vector<std::string>{"graph1_1:gpu", "graph1_2:gpu", "graph2:cpu"}));

  testing::TempDir dir;
  format::WriteModel(model, dir.file("chain.tflite"));
  const pipeline::Spec spec = pipeline::LoadSpec(WriteHostCut(cut, dir.file("c")));
  for (size_t s = 0; s < 2; ++s) {
    const auto lint = testing::RunGpuclean("lint " + dir.file(spec.stages[s].graph) + " --target mldrift-cl@2.2.0");
    EXPECT_EQ(lint.out.find("compile-ceiling"), std::string::npos) << lint.out;
  }
  pipeline::ProveOptions options;
  options.run.seed = 6;
  const pipeline::ProveReport report = pipeline::Prove(spec, dir.file("chain.tflite"), options);
  EXPECT_TRUE(report.passed) << pipeline::RenderProve(report);
  for (size_t o = 0; o < report.chain.outputs.size(); ++o)
    EXPECT_EQ(report.chain.outputs[o].data, report.reference[o].data) << "output " << o;
}

}  // namespace
}  // namespace gpuclean::split
