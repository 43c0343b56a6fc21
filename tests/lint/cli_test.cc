// ctest-labels: slow
#include <filesystem>

#include "lint_test_util.h"

namespace gpuclean::lint {
namespace {

using gpuclean::testing::RunGpuclean;
using gpuclean::testing::ShellQuote;

std::string Sparse() { return ShellQuote(gpuclean::testing::FixtureModel("face_detection_full_range_sparse.tflite")); }
std::string Clean() { return ShellQuote(gpuclean::testing::FixtureModel("face_detection_short_range.tflite")); }

TEST(LintCli, CleanModelExitsZeroWithTheResidencyLine) {
  auto r = RunGpuclean("lint " + Clean());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("predicted: 164 of 164 nodes on GPU, 1 partition"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("summary: 0 error(s)"), std::string::npos);
}

TEST(LintCli, FindingsAtFailOnExitOne) {
  EXPECT_EQ(RunGpuclean("lint " + Sparse()).exit_code, 1);
  auto warn = RunGpuclean("lint " + ShellQuote(gpuclean::testing::FixtureModel("selfie_segmentation.tflite")) +
                          " --target mldrift-webgpu@2.5.3 --fail-on warning");
  EXPECT_EQ(warn.exit_code, 0) << warn.out;
}

TEST(LintCli, JsonParsesAndHasTheDocumentedShape) {
  auto r = RunGpuclean("lint " + Sparse() + " --format json --target mldrift-webgpu@2.5.3");
  ASSERT_EQ(r.exit_code, 1) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["target"], "mldrift-webgpu@2.5.3");
  EXPECT_EQ(j["residency"][0]["gpu_nodes"], 159);
  EXPECT_EQ(j["residency"][0]["runtime_log"],
            "159 operations will run on the GPU, and the remaining 229 operations will run on the CPU.");
  EXPECT_EQ(j["summary"]["errors"], 92);
  const auto& f = j["findings"][0];
  for (const char* key : {"rule", "severity", "status", "subgraph", "node", "op", "tensors", "why", "consequence",
                          "fix", "provenance", "evidence"})
    EXPECT_TRUE(f.contains(key)) << key;
}

TEST(LintCli, SarifHasThe210Shape) {
  auto r = RunGpuclean("lint " + Sparse() + " --format sarif");
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["version"], "2.1.0");
  EXPECT_TRUE(j["$schema"].get<std::string>().find("sarif-2.1.0") != std::string::npos);
  const auto& run = j["runs"][0];
  EXPECT_EQ(run["tool"]["driver"]["name"], "gpuclean");
  ASSERT_FALSE(run["tool"]["driver"]["rules"].empty());
  const auto& result = run["results"][0];
  EXPECT_EQ(result["level"], "error");
  EXPECT_TRUE(result["message"].contains("text"));
  EXPECT_TRUE(result["locations"][0]["physicalLocation"]["artifactLocation"].contains("uri"));
  EXPECT_EQ(run["tool"]["driver"]["rules"][result["ruleIndex"].get<int>()]["id"], result["ruleId"]);
}

TEST(LintCli, MarkdownHasATable) {
  auto r = RunGpuclean("lint " + Sparse() + " --format md");
  EXPECT_NE(r.out.find("| severity | rule |"), std::string::npos);
  EXPECT_NE(r.out.find("`densify`"), std::string::npos);
}

TEST(LintCli, BadInputExitsTwoWithOneLine) {
  auto unknown = RunGpuclean("lint " + Clean() + " --target mldrift-cl@0.0");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("valid: mldrift-cl@2.1.3"), std::string::npos) << unknown.err;
  EXPECT_EQ(std::count(unknown.err.begin(), unknown.err.end(), '\n'), 1);
  auto missing = RunGpuclean("lint /nonexistent/model.tflite");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_EQ(RunGpuclean("lint " + Clean() + " --format xml").exit_code, 2);
}

TEST(LintCli, DataDirOverrideAndMatrixValidate) {
  auto ok = RunGpuclean("matrix validate");
  EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
  gpuclean::testing::TempDir empty;
  auto none = gpuclean::testing::RunCommand("GPUCLEAN_DATA_DIR=" + ShellQuote(empty.path().string()) + " " +
                                            ShellQuote(GPUCLEAN_BINARY) + " lint " + Clean());
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("unknown target"), std::string::npos) << none.err;
}

// matrix list counts each target's facts by provenance; matrix show lists
// them; a target nobody has is one line and exit 2, for show and for
// synth --edges alike.
TEST(LintCli, MatrixListShowAndRuleEdgesNameTheirTargets) {
  auto list = RunGpuclean("matrix list");
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(list.out.find("mldrift-cl@2.2.0"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find(" source"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("(default)"), std::string::npos) << list.out;
  auto show = RunGpuclean("matrix show mldrift-cl@2.2.0");
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_NE(show.out.find("softmax-beta"), std::string::npos);
  EXPECT_NE(show.out.find("model_builder.cc:5033 @ v2.2.0"), std::string::npos);
  gpuclean::testing::TempDir dir;
  for (const std::string& args :
       {std::string("matrix show no-such@1"), "synth --edges no-such@1 --out " + ShellQuote(dir.file("edges")),
        std::string("synth --edges mldrift-cl@2.2.0")}) {
    auto bad = RunGpuclean(args);
    EXPECT_EQ(bad.exit_code, 2) << args;
    EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << args << ": " << bad.err;
  }
  auto edges = RunGpuclean("synth --edges mldrift-cl@2.2.0 --out " + ShellQuote(dir.file("edges")));
  ASSERT_EQ(edges.exit_code, 0) << edges.err;
  EXPECT_TRUE(std::filesystem::exists(dir.file("edges") + "/softmax-beta.past.tflite"));
  EXPECT_TRUE(std::filesystem::exists(dir.file("edges") + "/edges.json"));
}

}  // namespace
}  // namespace gpuclean::lint
