// ctest-labels: litert slow
// compare, record and bench through the binary: exit codes, one-line errors,
// text and JSON shapes. The numbers themselves are tested in tests/analyze/.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "gpuclean/format.h"
#include "gpuclean/ir.h"
#include "gpuclean/npy.h"
#include "support/arrays.h"
#include "support/test_support.h"

namespace gpuclean {
namespace {

using gpuclean::testing::F32;

using testing::RunGpuclean;
using testing::ShellQuote;
using testing::TempDir;

void WriteText(const std::string& path, const std::string& text) { std::ofstream(path) << text; }
std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}
class VerifyCli : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(ref());
    std::filesystem::create_directories(got());
    npy::Write(ref() + "/out0.npy", F32({2, 3}, {0.1f, 0.9f, 0, 0.5f, 0.2f, 0.3f}));
    npy::Write(got() + "/out0.npy", F32({2, 3}, {0.1f, 0.9f, 0, 0.1f, 0.2f, 0.3f}));
    WriteText(dir.file("gpu.log"),
              "03-12 10:11:12.345  4242  4290 E tflite  : Following operations are not supported by GPU delegate:\n"
              "03-12 10:11:12.345  4242  4290 E tflite  : SELECT_V2: Operation is not supported.\n"
              "03-12 10:11:12.350  4242  4290 I tflite  : Replacing 40 out of 44 node(s) with delegate "
              "(TfLiteGpuDelegateV2) node, yielding 2 partitions.\n");
  }
  std::string ref() const { return dir.file("ref"); }
  std::string got() const { return dir.file("got"); }
  std::string Pair() const { return ShellQuote(ref()) + " " + ShellQuote(got()); }
  TempDir dir;
};

TEST_F(VerifyCli, CompareTextJsonAndGateExitCodes) {
  auto ok = RunGpuclean("compare " + Pair());
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find("corr"), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find("result: PASS (no gates given)"), std::string::npos) << ok.out;

  auto gated = RunGpuclean("compare " + Pair() + " --gate argmax --gate 'corr>=0.5' --json");
  EXPECT_EQ(gated.exit_code, 1) << gated.err;
  const nlohmann::json j = nlohmann::json::parse(gated.out);
  EXPECT_EQ(j["tensors"][0]["gates"][0]["gate"], "argmax");
  EXPECT_EQ(j["tensors"][0]["gates"][0]["passed"], false);
  EXPECT_EQ(j["gates_passed"], false);

  auto topk = RunGpuclean("compare " + Pair() + " --gate out0:topk=1");
  EXPECT_EQ(topk.exit_code, 1);
  EXPECT_NE(topk.out.find("top-1 sets equal in 1/2 rows"), std::string::npos) << topk.out;
}

TEST_F(VerifyCli, CompareLogPrintsResidency) {
  auto r = RunGpuclean("compare " + Pair() + " --log " + ShellQuote(dir.file("gpu.log")));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("40/44 ops on the GPU, 4 on the CPU; 2 GPU partition(s)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("SELECT_V2: Operation is not supported."), std::string::npos) << r.out;
  auto j = RunGpuclean("compare " + Pair() + " --json --log " + ShellQuote(dir.file("gpu.log")));
  EXPECT_EQ(nlohmann::json::parse(j.out)["residency"]["partitions"], 2);
}

TEST_F(VerifyCli, CompareFlagsASilentFallbackLoudly) {
  npy::Write(got() + "/out0.npy", F32({2, 3}, {0.1f, 0.9f, 0, 0.5f, 0.2f, 0.3f}));
  auto plain = RunGpuclean("compare " + Pair());
  EXPECT_EQ(plain.exit_code, 0);
  auto gpu = RunGpuclean("compare " + Pair() + " --got-accelerator gpu");
  EXPECT_EQ(gpu.exit_code, 1);
  EXPECT_NE(gpu.out.find("!! SILENT FALLBACK SUSPECTED"), std::string::npos) << gpu.out;
  auto json = RunGpuclean("compare " + Pair() + " --got-accelerator gpu --json");
  EXPECT_EQ(json.exit_code, 1);
  EXPECT_EQ(nlohmann::json::parse(json.out)["silent_fallback_suspected"], true);
  EXPECT_NE(json.err.find("!! SILENT FALLBACK SUSPECTED"), std::string::npos) << json.err;
}

TEST_F(VerifyCli, CompareBadInputIsOneLineExitTwo) {
  for (const std::string& args :
       {"compare " + Pair() + " --gate 'corr>0.9'", "compare " + Pair() + " --gate 'iou>=0.5'",
        "compare " + Pair() + " --gate 'iou>=0.5' --boxes xywh",
        "compare " + ShellQuote(ref()) + " " + ShellQuote(dir.file("nope")),
        "compare " + Pair() + " --log " + ShellQuote(dir.file("nope.log")),
        "compare " + Pair() + " --gate 'iou>=0.5' --boxes xyxy"}) {
    auto r = RunGpuclean(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.out;
    EXPECT_EQ(testing::CountLines(r.err), 1) << args << ": " << r.err;
  }
}

TEST_F(VerifyCli, RecordAppendsARowAndRefusesIncompleteOnes) {
  const std::string readme = dir.file("README.md"), records = dir.file("records.json");
  WriteText(readme, "# Recipe\n");
  const std::string base = "record --ref " + ShellQuote(ref()) + " --got " + ShellQuote(got()) + " --readme " +
                           ShellQuote(readme) + " --json " + ShellQuote(records) + " --accelerator gpu";
  auto refused = RunGpuclean(base + " --log " + ShellQuote(dir.file("gpu.log")) + " --device 'Pixel 8a'");
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_EQ(testing::CountLines(refused.err), 1) << refused.err;
  EXPECT_NE(refused.err.find("record refused: --runtime"), std::string::npos) << refused.err;
  auto no_log = RunGpuclean(base + " --device 'Pixel 8a' --runtime 2.1.6");
  EXPECT_EQ(no_log.exit_code, 2);
  EXPECT_NE(no_log.err.find("record refused: --log"), std::string::npos) << no_log.err;
  EXPECT_EQ(ReadText(readme), "# Recipe\n");

  auto r = RunGpuclean(base + " --log " + ShellQuote(dir.file("gpu.log")) +
                       " --device 'Pixel 8a' --runtime 2.1.6 --gate 'maxabs<=0.5' --date 2026-03-04");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("recorded: | Pixel 8a | gpu | 2.1.6 | 40/44 nodes, 2 partitions |"), std::string::npos) << r.out;
  EXPECT_NE(ReadText(readme).find("## Device records\n\n| device | accelerator | runtime |"), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(ReadText(records))[0]["date"], "2026-03-04");
}

TEST(BenchCli, OursAndLiteRtWasmOnAFixture) {
  const std::string model = ShellQuote(testing::FixtureModel("face_detection_short_range.tflite"));
  for (const char* runtime : {"ours", "litert-wasm"}) {
    SCOPED_TRACE(runtime);
    auto r = RunGpuclean("bench " + model + " --runtime " + runtime + " --repeat 3 --warmup 1 --json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["runtime"], runtime);
    EXPECT_EQ(j["repeat"], 3);
    EXPECT_EQ(j["warmup"], 1);
    ASSERT_EQ(j["timed_ms"].size(), 3u);
    const double min = j["min_ms"], median = j["median_ms"], max = j["max_ms"];
    EXPECT_GT(min, 0);
    EXPECT_LE(min, median);
    EXPECT_LE(median, max);
    EXPECT_GT(j["first_ms"].get<double>(), 0);
    EXPECT_FALSE(j["residency_line"].get<std::string>().empty());
  }
  auto text = RunGpuclean("bench " + model + " --repeat 2 --warmup 0");
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("first run"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("median"), std::string::npos) << text.out;
  for (const std::string& args :
       {"bench " + model + " --repeat 0", "bench " + model + " --runtime tpu",
        "bench " + model + " --runtime litert-wasm --threads 2", "bench " + model + " --runtime litert-wasm --by-op"}) {
    auto bad = RunGpuclean(args);
    EXPECT_EQ(bad.exit_code, 2) << args;
    EXPECT_EQ(testing::CountLines(bad.err), 1) << args << ": " << bad.err;
  }
}

TEST(BenchCli, ByOpSumsEveryOpOfTheModelPerType) {
  const std::string path = testing::FixtureModel("face_detection_short_range.tflite");
  const ir::Model model = format::ReadModel(path);
  std::map<std::string, int> want;
  for (const ir::Op& op : model.main().ops) ++want[op.name()];
  auto r = RunGpuclean("bench " + ShellQuote(path) + " --repeat 3 --warmup 0 --by-op --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  std::map<std::string, int> got;
  double sum = 0, previous = 1e300;
  for (const auto& t : j["by_op"]) {
    got[t["op"]] = t["count"];
    const double ms = t["ms"];
    EXPECT_LE(ms, previous) << "by_op is slowest first";
    previous = ms;
    sum += ms;
  }
  // Ops on constants only (this model's float16 weights' DEQUANTIZEs) run
  // once before the timed runs.
  EXPECT_EQ(j["ops_at_prepare"], want["DEQUANTIZE"]);
  want.erase("DEQUANTIZE");
  EXPECT_EQ(got, want);
  // The per-op clocks cover the run, so their sum is near the run's time.
  EXPECT_GT(sum, 0.5 * j["min_ms"].get<double>());
  EXPECT_LT(sum, 2.0 * j["max_ms"].get<double>());
  ASSERT_EQ(j["slowest_ops"].size(), std::min<size_t>(10, model.main().ops.size()));
  EXPECT_GE(j["slowest_ops"][0]["ms"].get<double>(), j["slowest_ops"][1]["ms"].get<double>());
  auto text = RunGpuclean("bench " + ShellQuote(path) + " --repeat 2 --warmup 0 --by-op");
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("by op type"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("CONV_2D"), std::string::npos) << text.out;
}

}  // namespace
}  // namespace gpuclean
