// `gpuclean fix` end to end: writes a proven model, never the input unless
// --in-place, nothing on --dry-run, one-line errors with exit 2.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "gpuclean/builder.h"
#include "gpuclean/format.h"
#include "support/test_support.h"

namespace gpuclean {
namespace {

namespace fs = std::filesystem;
using testing::RunGpuclean;
using testing::ShellQuote;

const std::string& Sparse() {
  static const std::string path = testing::FixtureModel("face_detection_full_range_sparse.tflite");
  return path;
}

TEST(FixCommand, WritesTheProvenModelAndASummary) {
  testing::TempDir dir;
  const std::string out = dir.file("fixed.tflite");
  auto r = RunGpuclean("fix " + ShellQuote(Sparse()) + " -o " + ShellQuote(out));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("densify-offline"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("46 site(s): proven"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("after:  predicted: 342 of 342 nodes on GPU, 1 partition"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("wrote " + out), std::string::npos) << r.out;
  const ir::Model fixed = format::ReadModel(out);
  for (const ir::Op& op : fixed.main().ops) EXPECT_NE(op.code, tfl::BuiltinOperator_DENSIFY);
}

// The whole loop on a real model: the sparse face detector runs 159/388 ops
// on the real WebGPU delegate and its outputs disagree with fp32 there; after
// fix, check measures it fully delegated with outputs that hold.
TEST(FixCommand, FixedSparseModelIsGpuCleanOnTheRealWebGpuDelegate) {
  testing::TempDir dir;
  const std::string out = dir.file("fixed.tflite");
  ASSERT_EQ(RunGpuclean("fix " + ShellQuote(Sparse()) + " -o " + ShellQuote(out)).exit_code, 0);
  auto r = RunGpuclean("check --json " + ShellQuote(out));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["verdict"], "gpu-clean") << j["verdict_line"];
  ASSERT_EQ(j["webgpu"]["ran"], true) << j["webgpu"].dump();
  EXPECT_EQ(j["webgpu"]["residency"]["gpu_ops"], 342);
  for (const auto& m : j["webgpu"]["outputs_vs_reference"]) EXPECT_GE(m["correlation"].get<double>(), 0.999);
}

TEST(FixCommand, JsonDryRunWritesNothing) {
  testing::TempDir dir;
  auto r = RunGpuclean("fix --dry-run --format json " + ShellQuote(Sparse()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["ok"], true);
  EXPECT_EQ(j["changed_sites"], 46);
  EXPECT_EQ(j["written"].size(), 0u);
  EXPECT_EQ(j["lint_after"]["errors"], 0);
  EXPECT_GT(j["lint_before"]["errors"].get<int>(), 0);
}

TEST(FixCommand, InPlaceReplacesOnlyWhenAsked) {
  testing::TempDir dir;
  const std::string copy = dir.file("model.tflite");
  fs::copy_file(Sparse(), copy);
  const auto size_before = fs::file_size(copy);
  auto refused = RunGpuclean("fix " + ShellQuote(copy) + " -o " + ShellQuote(copy));
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("refusing to overwrite the input model"), std::string::npos) << refused.err;
  EXPECT_EQ(fs::file_size(copy), size_before);
  auto in_place = RunGpuclean("fix --in-place " + ShellQuote(copy));
  ASSERT_EQ(in_place.exit_code, 0) << in_place.err;
  EXPECT_NE(fs::file_size(copy), size_before);
  EXPECT_NO_THROW(format::ReadModel(copy));
}

// A vendor op our interpreter has no kernel for: lint still chooses the SPLIT
// rewrite, but nothing can be proven, so nothing is written.
TEST(FixCommand, UnprovableRewriteWritesNothingAndSaysWhy) {
  testing::TempDir dir;
  builder::GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 4, 4, 8});
  const auto halves = b.Split(x, 3, 2);
  b.Output(b.Custom("MyVendorOp", {b.Add(halves[0], halves[1])}, {}, {{tfl::TensorType_FLOAT32, {1, 4, 4, 4}}})[0]);
  const std::string model = dir.file("vendor.tflite"), out = dir.file("fixed.tflite");
  format::WriteModel(b.Finish(), model);
  auto r = RunGpuclean("fix " + ShellQuote(model) + " -o " + ShellQuote(out));
  EXPECT_EQ(r.exit_code, 1) << r.err << r.out;
  EXPECT_NE(r.out.find("split-to-slices cannot be proven"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("MyVendorOp"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("nothing written"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(out));
}

TEST(FixCommand, BadUsageIsOneLineAndExitTwo) {
  for (const std::string& args : std::vector<std::string>{"fix " + ShellQuote(Sparse()),  // no -o
                                  "fix " + ShellQuote(Sparse()) + " --dry-run --passes nope",
                                  "fix /nonexistent.tflite --dry-run"}) {
    SCOPED_TRACE(args);
    auto r = RunGpuclean(args);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

}  // namespace
}  // namespace gpuclean
