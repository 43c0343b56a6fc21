// ctest-labels: litert webgpu slow
// `gpuclean probe` end to end: output, exit codes, one-line errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "gpuclean/builder.h"
#include "gpuclean/format.h"
#include "gpuclean/npy.h"
#include "support/arrays.h"
#include "support/test_support.h"

namespace gpuclean {
namespace {
using testing::ShellQuote;

size_t Lines(const std::string& s) { return std::count(s.begin(), s.end(), '\n'); }

TEST(ProbeCli, WebGpuResidencyOnlyReportsTheRankFiveRejection) {
  testing::TempDir dir;
  builder::GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 4, 4, 8});
  b.Output(b.Reshape(b.Relu(b.Reshape(x, {1, 4, 4, 2, 4})), {1, 4, 4, 8}));
  format::WriteModel(b.Finish(), dir.file("rank5.tflite"));
  auto r = testing::RunGpuclean("probe " + ShellQuote(dir.file("rank5.tflite")) +
                                " --runtime litert-webgpu --residency-only --out " + ShellQuote(dir.file("out")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("residency: 0/3 ops on the GPU, 3 on the CPU"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Tensor dimensions must be less than 5"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("isFullyAccelerated=true disagrees with the delegate log"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(dir.file("out/out0.npy")));  // compiled, not run
  auto meta = nlohmann::json::parse(std::ifstream(dir.file("out/meta.json")));
  EXPECT_EQ(meta["residency"]["gpu_ops"], 0);
}

// A constant convert moved out of the file (OUT.<input>.npy beside it) is
// fed to LiteRT.js, not generated.
TEST(ProbeCli, FeedsTheHostFedConstantBesideTheModel) {
  testing::TempDir dir;
  builder::GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 4});
  b.Output(b.Add(x, b.Input("host-fed-constants/c", tfl::TensorType_FLOAT32, {1, 4})));
  format::WriteModel(b.Finish(), dir.file("m.tflite"));
  npy::Write(dir.file("m.host-fed-constants_c.npy"), testing::F32({1, 4}, {1000, 2000, 3000, 4000}));
  auto r = testing::RunGpuclean("probe " + ShellQuote(dir.file("m.tflite")) + " --runtime litert-wasm --out " +
                                ShellQuote(dir.file("out")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const npy::Array in = npy::Read(dir.file("out/in0.npy")), out = npy::Read(dir.file("out/out0.npy"));
  for (int k = 0; k < 4; ++k) EXPECT_EQ(out.as<float>()[k], in.as<float>()[k] + 1000.0f * (k + 1));
}

TEST(ProbeCli, WasmJsonRunWritesOutputs) {
  testing::TempDir dir;
  const std::string model = testing::FixtureModel("face_detection_short_range.tflite");
  auto r = testing::RunGpuclean("probe " + ShellQuote(model) + " --runtime litert-wasm --seed 3 --json --out " +
                                ShellQuote(dir.file("out")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto meta = nlohmann::json::parse(r.out);
  EXPECT_EQ(meta["ok"], true);
  EXPECT_EQ(meta["runtime_id"], "litert-wasm");
  EXPECT_EQ(meta["residency"]["gpu_ops"], 0);
  EXPECT_GT(meta["residency"]["cpu_ops"].get<int>(), 0);
  EXPECT_TRUE(std::filesystem::exists(dir.file("out/out0.npy")));
  EXPECT_TRUE(std::filesystem::exists(dir.file("out/out1.npy")));
  EXPECT_TRUE(std::filesystem::exists(dir.file("out/in0.npy")));
  // Feeding the generated input back gives the same outputs.
  auto again = testing::RunGpuclean("probe " + ShellQuote(model) + " --runtime litert-wasm --input 0=" +
                                    ShellQuote(dir.file("out/in0.npy")) + " --out " + ShellQuote(dir.file("again")));
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(npy::Read(dir.file("out/out0.npy")).data, npy::Read(dir.file("again/out0.npy")).data);
}

TEST(ProbeCli, BadInputExitsTwoWithOneLine) {
  testing::TempDir dir;
  const std::string model = ShellQuote(testing::FixtureModel("face_detection_short_range.tflite"));
  npy::Array wrong;
  wrong.shape = {1, 2, 2, 3};
  wrong.data.resize(12 * 4);
  npy::Write(dir.file("wrong.npy"), wrong);
  const std::string out = " --out " + ShellQuote(dir.file("o"));
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"probe " + ShellQuote(dir.file("missing.tflite")) + " --runtime litert-wasm" + out, "no such model"},
      {"probe " + model + " --runtime litert-gpu" + out, "--runtime expects"},
      {"probe " + model + " --runtime litert-wasm --precision fp16" + out, "needs --runtime litert-webgpu"},
      {"probe " + model + " --runtime litert-webgpu --precision fp8" + out, "--precision expects"},
      {"probe " + model + " --runtime litert-wasm --input 0" + out, "KEY=FILE.npy"},
      {"probe " + model + " --runtime litert-wasm --input 0=" + ShellQuote(dir.file("wrong.npy")) + out,
       "does not match model shape"},
      {"probe " + model + " --runtime litert-wasm", "--out"},
  };
  for (const auto& [args, needle] : cases) {
    SCOPED_TRACE(args);
    auto r = testing::RunGpuclean(args);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(Lines(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
  }
}

TEST(ProbeCli, MissingNodeOrChromiumIsOneClearLine) {
  testing::TempDir dir;
  const std::string model = ShellQuote(testing::FixtureModel("face_detection_short_range.tflite"));
  const std::string bin = ShellQuote(GPUCLEAN_BINARY);
  auto no_node = testing::RunCommand("GPUCLEAN_NODE=/nonexistent/node " + bin + " probe " + model +
                                     " --runtime litert-wasm --out " + ShellQuote(dir.file("a")));
  EXPECT_EQ(no_node.exit_code, 2);
  EXPECT_EQ(Lines(no_node.err), 1u) << no_node.err;
  EXPECT_NE(no_node.err.find("node not found"), std::string::npos) << no_node.err;
  auto no_browser = testing::RunCommand("GPUCLEAN_CHROMIUM=/nonexistent/chromium " + bin + " probe " + model +
                                        " --runtime litert-webgpu --out " + ShellQuote(dir.file("b")));
  EXPECT_EQ(no_browser.exit_code, 2);
  EXPECT_EQ(Lines(no_browser.err), 1u) << no_browser.err;
  EXPECT_NE(no_browser.err.find("/nonexistent/chromium not found"), std::string::npos) << no_browser.err;
  auto no_sources = testing::RunCommand("GPUCLEAN_SOURCE_DIR=/nonexistent " + bin + " probe " + model +
                                        " --runtime litert-wasm --out " + ShellQuote(dir.file("c")));
  EXPECT_EQ(no_sources.exit_code, 2);
  EXPECT_NE(no_sources.err.find("GPUCLEAN_SOURCE_DIR"), std::string::npos) << no_sources.err;
}

}  // namespace
}  // namespace gpuclean
