// ctest-labels: slow
// split: the chain of parts reproduces the monolith bit for bit, on builder
// graphs with skip connections and on every fixture model, cut at two
// tensors; bad cuts are usage errors.
#include <gtest/gtest.h>

#include <filesystem>

#include "gpuclean/builder.h"
#include "gpuclean/error.h"
#include "gpuclean/format.h"
#include "gpuclean/split.h"
#include "support/test_support.h"
#include "support/tflite_names.h"

namespace gpuclean::split {
namespace {

using builder::GraphBuilder;
using ::gpuclean::testing::tflite_names::F32;

// x -> relu -> a; a * 2 -> b; b + a (skip) -> c; tanh(c) -> out, plus a
// second output computed from a.
ir::Model SkipGraph() {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 4, 4, 2});
  int a = b.Relu(x);
  int two = b.ConstF32("two", {1}, {2.0f});
  int bb = b.Mul(a, two);
  int c = b.Add(bb, a);
  b.Output(b.Tanh(c));
  b.Output(b.Logistic(a));
  return b.Finish();
}

std::string NameOf(const ir::Model& m, int tensor) { return m.main().tensors[tensor].name; }

TEST(Split, SkipConnectionsCrossTheCutAndTheChainIsBitExact) {
  const ir::Model model = SkipGraph();
  const std::string a = NameOf(model, model.main().ops[0].outputs[0]);
  const std::string bb = NameOf(model, model.main().ops[1].outputs[0]);
  const std::vector<Part> parts = Cut(model, {bb, a});  // order given does not matter
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0].ops, 1);  // relu
  EXPECT_EQ(parts[0].outputs, (std::vector<std::string>{a}));
  EXPECT_EQ(parts[2].inputs.size(), 2u) << "the skip connection a crosses into part 3";
  EXPECT_EQ(parts[2].input_from, (std::vector<int>{0, 1}));
  const Proof proof = ProveChain(model, parts, 7);
  EXPECT_TRUE(proof.bit_exact) << (proof.mismatches.empty() ? "" : proof.mismatches[0]);
  EXPECT_EQ(proof.outputs, 2);
}

TEST(Split, BadCutsAreUsageErrors) {
  const ir::Model model = SkipGraph();
  auto expect_usage = [&](const std::vector<std::string>& at, const std::string& words) {
    try {
      Cut(model, at);
      ADD_FAILURE() << "no error for " << at[0];
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kUsage);
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  expect_usage({"nope"}, "no tensor named 'nope'");
  expect_usage({"x"}, "graph input");
  expect_usage({"two"}, "constant");
  const std::string a = NameOf(model, model.main().ops[0].outputs[0]);
  expect_usage({a, a}, "named twice");
}

TEST(Split, EveryFixtureModelCutAtTwoTensorsReproducesTheMonolith) {
  for (const std::string& path : testing::FixtureModels()) {
    SCOPED_TRACE(path);
    const ir::Model model = format::ReadModel(path);
    const ir::Subgraph& g = model.main();
    // Two runtime tensors about a third and two thirds through the graph.
    std::vector<std::string> at;
    for (double f : {0.33, 0.66}) {
      for (size_t i = static_cast<size_t>(f * g.ops.size()); i < g.ops.size(); ++i) {
        const ir::Op& op = g.ops[i];
        if (op.code == tfl::BuiltinOperator_DEQUANTIZE || op.code == tfl::BuiltinOperator_DENSIFY) continue;
        at.push_back(g.tensors[op.outputs[0]].name);
        break;
      }
    }
    ASSERT_EQ(at.size(), 2u);
    const std::vector<Part> parts = Cut(model, at);
    ASSERT_EQ(parts.size(), 3u);
    const Proof proof = ProveChain(model, parts, 1);
    EXPECT_TRUE(proof.bit_exact) << (proof.mismatches.empty() ? "" : proof.mismatches[0]);
    // The parts are real models: they round-trip through the format.
    testing::TempDir dir;
    const auto files = WriteParts(parts, dir.file("m"), ChainJson(model, parts, {}, proof));
    ASSERT_EQ(files.size(), 3u);
    for (const std::string& f : files) EXPECT_NO_THROW(format::ReadModel(f));
    EXPECT_TRUE(std::filesystem::exists(dir.file("m.pipeline.json")));
  }
}

TEST(Split, CliWritesTheChainAndDescribesIt) {
  testing::TempDir dir;
  const std::string model = testing::FixtureModel("selfie_segmentation.tflite");
  const testing::CommandResult r = testing::RunGpuclean("split " + testing::ShellQuote(model) +
                                                        " --at conv2d_27,conv2d_36 -o " + dir.file("selfie"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("into 3 parts"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("<- part 1 output"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bit for bit"), std::string::npos) << r.out;
  for (int k = 1; k <= 3; ++k)
    EXPECT_TRUE(std::filesystem::exists(dir.file("selfie.part" + std::to_string(k) + ".tflite")));
  const testing::CommandResult bad = testing::RunGpuclean("split " + testing::ShellQuote(model) + " --at nope -o x");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("no tensor named 'nope'"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace gpuclean::split
