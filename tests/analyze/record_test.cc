// ctest-labels: litert
// record: the README table edit, the JSON array, the residency cell and the
// refusals (nothing written for a row without device, runtime or residency).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "gpuclean/error.h"
#include "gpuclean/record.h"
#include "support/arrays.h"
#include "support/test_support.h"

namespace gpuclean::analyze {
namespace {

using gpuclean::testing::F32;

using gpuclean::testing::TempDir;

constexpr const char* kHeader =
    "| device | accelerator | runtime | N/M nodes, partitions | corr | max abs | task gate |";
constexpr const char* kRule = "|---|---|---|---|---|---|---|";

void WriteTextRecord(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}
std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string RefusalOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.kind() == ErrorKind::kUsage ? e.what() : std::string("wrong kind: ") + e.what();
  }
  return "did not refuse";
}

TEST(RecordTable, CreatesTheSectionAtTheEnd) {
  const std::string row = "| a | gpu | 1.2.3 | 3/3 nodes, 1 partition | 1.000000 | 0 | none |";
  EXPECT_EQ(AppendRecordRow("# Model\n\nText.\n", row),
            std::string("# Model\n\nText.\n\n## Device records\n\n") + kHeader + "\n" + kRule + "\n" + row + "\n");
  EXPECT_EQ(AppendRecordRow("# Model", row),  // no trailing newline
            std::string("# Model\n\n## Device records\n\n") + kHeader + "\n" + kRule + "\n" + row + "\n");
  EXPECT_EQ(AppendRecordRow("", row),
            std::string("## Device records\n\n") + kHeader + "\n" + kRule + "\n" + row + "\n");
}

TEST(RecordTable, AppendsAfterTheLastRowAndKeepsTheRest) {
  const std::string readme = std::string("# M\n\n## Device records\n\nSome words.\n\n") + kHeader + "\n" + kRule +
                             "\n| old | gpu | 1 | x | y | z | w |\n\n## Later section\n\n| other | table |\n";
  const std::string out = AppendRecordRow(readme, "| new |");
  EXPECT_EQ(out, std::string("# M\n\n## Device records\n\nSome words.\n\n") + kHeader + "\n" + kRule +
                     "\n| old | gpu | 1 | x | y | z | w |\n| new |\n\n## Later section\n\n| other | table |\n");
}

TEST(RecordTable, HeadingWithoutATableAndCrLf) {
  EXPECT_EQ(AppendRecordRow("## Device records\nNotes follow.\n", "| r |"),
            std::string("## Device records\n\n") + kHeader + "\n" + kRule + "\n| r |\n\nNotes follow.\n");
  const std::string crlf = std::string("## Device records\r\n\r\n") + kHeader + "\r\n" + kRule + "\r\n| a |\r\n";
  EXPECT_EQ(AppendRecordRow(crlf, "| b |"),
            std::string("## Device records\r\n\r\n") + kHeader + "\r\n" + kRule + "\r\n| a |\r\n| b |\r\n");
}

TEST(RecordTable, MarkdownRowEscapesPipes) {
  RecordRow row{"Pixel | 8a", "gpu", "2.1.6", "3/3 nodes, 1 partition", "0.99", "0.1", "argmax pass"};
  EXPECT_EQ(MarkdownRow(row), "| Pixel \\| 8a | gpu | 2.1.6 | 3/3 nodes, 1 partition | 0.99 | 0.1 | argmax pass |");
}

TEST(RecordJson, AppendsToAnArray) {
  EXPECT_EQ(nlohmann::json::parse(AppendRecordJson("", {{"a", 1}}, "r.json")), nlohmann::json::parse(R"([{"a":1}])"));
  EXPECT_EQ(nlohmann::json::parse(AppendRecordJson(R"([{"a":1}])", {{"b", 2}}, "r.json")),
            nlohmann::json::parse(R"([{"a":1},{"b":2}])"));
  EXPECT_THROW(AppendRecordJson(R"({"a":1})", {{"b", 2}}, "r.json"), Error);
  EXPECT_THROW(AppendRecordJson("[1,", {{"b", 2}}, "r.json"), Error);
}

TEST(RecordResidency, CellsFromTheLogWordings) {
  const probe::Residency multi = probe::ParseDelegateLog(
      "I tflite  : Replacing 923 out of 1008 node(s) with delegate (LITERT_CL) node, yielding 2 partitions.\n"
      "E tflite  : Failed to compile model\n");
  EXPECT_EQ(ResidencyCell(multi, "gpu", std::nullopt, false), "923/1008 nodes, 2 partitions; compile failed");
  const probe::Residency litertjs = probe::ParseDelegateLog(
      "[compile] 159 operations will run on the GPU, and the remaining 229 operations will run on the CPU.\n");
  EXPECT_EQ(ResidencyCell(litertjs, "gpu", std::nullopt, false), "159/388 nodes, partitions not logged");
  const probe::Residency full = probe::ParseDelegateLog(
      "I1129 12:28:19.502000  755312 delegate_kernel.cc:855] Initializing WebGPU-based API from graph.\n");
  EXPECT_EQ(ResidencyCell(full, "gpu", 64, false), "64/64 nodes (counted from the model), 1 partition");
  EXPECT_NE(RefusalOf([&] { ResidencyCell(full, "gpu", std::nullopt, false); }).find("--model"), std::string::npos);
  const probe::Residency none = probe::ParseDelegateLog("INFO: hello\n");
  EXPECT_NE(RefusalOf([&] { ResidencyCell(none, "gpu", 10, false); }).find("no residency line"), std::string::npos);

  const probe::Residency xnnpack = probe::ParseDelegateLog(
      "INFO: Replacing 64 out of 66 node(s) with delegate (TfLiteXNNPackDelegate) node, yielding 2 partitions.\n");
  EXPECT_EQ(ResidencyCell(xnnpack, "cpu", std::nullopt, true), "CPU: XNNPACK 64/66 nodes, 2 partitions");
  EXPECT_EQ(ResidencyCell(none, "cpu", std::nullopt, true), "CPU: XNNPACK delegate (node count not logged)");
  EXPECT_NE(RefusalOf([&] { ResidencyCell(none, "cpu", std::nullopt, false); }).find("record refused"),
            std::string::npos);
}

class RecordFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(ref());
    std::filesystem::create_directories(got());
    // Logits of 2 rows; GOT drifts by 0.001 in one element (argmax unchanged).
    npy::Write(ref() + "/out0.npy", F32({2, 3}, {0.1f, 0.9f, 0, 0.5f, 0.2f, 0.3f}));
    npy::Write(got() + "/out0.npy", F32({2, 3}, {0.1f, 0.901f, 0, 0.5f, 0.2f, 0.3f}));
    WriteTextRecord(dir.file("gpu.log"),
                    "I tflite  : Created TensorFlow Lite delegate for GPU.\n"
                    "I tflite  : Replacing 50 out of 50 node(s) with delegate (TfLiteGpuDelegateV2) node, yielding 1 "
                    "partitions.\n");
    WriteTextRecord(readme(), "# Classifier\n\nRecipe text.\n");
  }
  std::string ref() const { return dir.file("ref"); }
  std::string got() const { return dir.file("got"); }
  std::string readme() const { return dir.file("README.md"); }
  RecordRequest Request() const {
    RecordRequest q;
    q.ref_dir = ref();
    q.got_dir = got();
    q.log_path = dir.file("gpu.log");
    q.device = "Pixel 8a (Mali-G615)";
    q.runtime = "2.1.6";
    q.accelerator = "gpu";
    q.gates = {ParseGate("argmax"), ParseGate("corr>=0.999")};
    q.readme_path = readme();
    q.json_path = dir.file("records.json");
    q.date = "2026-01-02";
    return q;
  }
  TempDir dir;
};

TEST_F(RecordFiles, WritesTheRowAndTheJson) {
  const RecordResult r = Record(Request());
  EXPECT_EQ(r.exit_code, 0);
  const std::string row = "| Pixel 8a (Mali-G615) | gpu | 2.1.6 | 50/50 nodes, 1 partition | " +
                          fmt::format("{:.6f}", r.comparison.tensors[0].metrics.correlation) +
                          "; corr>=0.999 pass | 0.001 | argmax pass |";
  EXPECT_EQ(ReadText(readme()), std::string("# Classifier\n\nRecipe text.\n\n## Device records\n\n") + kHeader + "\n" +
                                    kRule + "\n" + row + "\n");
  const nlohmann::json records = nlohmann::json::parse(ReadText(dir.file("records.json")));
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0]["device"], "Pixel 8a (Mali-G615)");
  EXPECT_EQ(records[0]["date"], "2026-01-02");
  EXPECT_EQ(records[0]["residency_line"], "50/50 nodes, 1 partition");
  EXPECT_EQ(records[0]["residency"]["gpu_ops"], 50);
  EXPECT_EQ(records[0]["passed"], true);
  EXPECT_EQ(records[0]["comparison"]["tensors"][0]["gates"][0]["gate"], "argmax");

  // A second device: one more row in the same table, one more JSON entry.
  RecordRequest q = Request();
  q.device = "Galaxy S24 (Adreno 750)";
  Record(q);
  const std::string text = ReadText(readme());
  EXPECT_EQ(text.find("## Device records"), text.rfind("## Device records"));
  EXPECT_NE(text.find(row + "\n| Galaxy S24 (Adreno 750) | gpu |"), std::string::npos) << text;
  EXPECT_EQ(nlohmann::json::parse(ReadText(dir.file("records.json"))).size(), 2u);
}

TEST_F(RecordFiles, RefusesRowsWithoutDeviceRuntimeOrResidency) {
  const std::string before = ReadText(readme());
  RecordRequest q = Request();
  q.device = "  ";
  EXPECT_NE(RefusalOf([&] { Record(q); }).find("--device"), std::string::npos);
  q = Request();
  q.runtime = "latest";
  EXPECT_NE(RefusalOf([&] { Record(q); }).find("--runtime"), std::string::npos);
  q = Request();
  q.accelerator = "npu";
  EXPECT_NE(RefusalOf([&] { Record(q); }).find("--accelerator"), std::string::npos);
  q = Request();
  q.log_path = "";
  EXPECT_NE(RefusalOf([&] { Record(q); }).find("--log"), std::string::npos);
  q = Request();
  WriteTextRecord(dir.file("quiet.log"), "I app: started\nI app: done\n");
  q.log_path = dir.file("quiet.log");
  EXPECT_NE(RefusalOf([&] { Record(q); }).find("no residency line"), std::string::npos);
  EXPECT_EQ(ReadText(readme()), before);
  EXPECT_FALSE(std::filesystem::exists(dir.file("records.json")));
}

TEST_F(RecordFiles, BadJsonFileLeavesTheReadmeAlone) {
  WriteTextRecord(dir.file("records.json"), R"({"not": "an array"})");
  const std::string before = ReadText(readme());
  EXPECT_THROW(Record(Request()), Error);
  EXPECT_EQ(ReadText(readme()), before);
}

TEST_F(RecordFiles, FailedGateAndSilentFallbackAreRecordedAndExitOne) {
  npy::Write(got() + "/out0.npy", F32({2, 3}, {0.1f, 0.9f, 0, 0.5f, 0.2f, 0.3f}));  // bit-identical to REF
  RecordRequest q = Request();
  q.gates = {ParseGate("argmax")};
  const RecordResult r = Record(q);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(r.comparison.silent_fallback_suspected);
  EXPECT_EQ(r.row.task_gate, "SILENT FALLBACK? bit-identical to the reference; argmax pass");

  npy::Write(got() + "/out0.npy", F32({2, 3}, {0.1f, 0.9f, 0, 0.1f, 0.2f, 0.3f}));  // row 1 flips to index 2
  const RecordResult failed = Record(q);
  EXPECT_EQ(failed.exit_code, 1);
  EXPECT_EQ(failed.row.task_gate, "argmax FAIL (argmax equal in 1/2 rows (first mismatch row 1: 0 vs 2))");
  EXPECT_EQ(nlohmann::json::parse(ReadText(dir.file("records.json"))).size(), 2u);
}

}  // namespace
}  // namespace gpuclean::analyze
