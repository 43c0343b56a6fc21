// compare: folder pairing, gates per tensor, the silent-fallback tell, and
// the residency rendering of a --log.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

#include "gpuclean/compare.h"
#include "gpuclean/error.h"
#include "support/arrays.h"
#include "support/test_support.h"

namespace gpuclean::analyze {
namespace {

using gpuclean::testing::F32;
using gpuclean::testing::I32;

using gpuclean::testing::TempDir;

void WriteTextCompare(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

ErrorKind KindOfCompare(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.kind();
  }
  return ErrorKind::kInternal;
}

TEST(Compare, NaturalOrder) {
  EXPECT_TRUE(NaturalLess("out2", "out10"));
  EXPECT_FALSE(NaturalLess("out10", "out2"));
  EXPECT_TRUE(NaturalLess("a", "b"));
  EXPECT_TRUE(NaturalLess("out1", "out1b"));
  EXPECT_FALSE(NaturalLess("out3", "out3"));
}

TEST(Compare, FoldersPairByNameAndReportOneSidedFiles) {
  TempDir dir;
  const std::string ref = dir.file("ref"), got = dir.file("got");
  std::filesystem::create_directories(ref);
  std::filesystem::create_directories(got);
  for (const char* name : {"out0.npy", "out2.npy", "out10.npy"}) npy::Write(ref + "/" + name, F32({2}, {1, 2}));
  for (const char* name : {"out0.npy", "out10.npy", "out11.npy"}) npy::Write(got + "/" + name, F32({2}, {1, 2.5f}));
  // Generated inputs beside a meta.json are the same on both sides by
  // construction: skipped, or they would read as a silent fallback.
  npy::Write(ref + "/in0.npy", F32({1}, {7}));
  npy::Write(got + "/in0.npy", F32({1}, {7}));
  WriteTextCompare(got + "/meta.json", "{}");

  const CompareReport r = CompareOutputs(ref, got, {});
  ASSERT_EQ(r.tensors.size(), 2u);
  EXPECT_EQ(r.tensors[0].name, "out0");
  EXPECT_EQ(r.tensors[1].name, "out10");
  EXPECT_DOUBLE_EQ(r.tensors[0].metrics.max_abs_diff, 0.5);
  EXPECT_EQ(r.only_in_ref, std::vector<std::string>{"out2.npy"});
  EXPECT_EQ(r.only_in_got, std::vector<std::string>{"out11.npy"});
  EXPECT_EQ(r.skipped_inputs, std::vector<std::string>{"in0.npy"});
  EXPECT_EQ(r.exit_code(), 1);  // a missing output is a failed comparison
  const std::string text = RenderText(r);
  EXPECT_NE(text.find("only in REF: out2.npy"), std::string::npos) << text;
  EXPECT_NE(text.find("only in GOT: out11.npy"), std::string::npos) << text;
  const nlohmann::json j = ToJson(r);
  EXPECT_EQ(j["tensors"][1]["name"], "out10");
  EXPECT_EQ(j["passed"], false);
}

TEST(Compare, GatesApplyPerTensorAndDecideTheExitCode) {
  TempDir dir;
  npy::Write(dir.file("ref.npy"), F32({2, 3}, {0.1f, 0.9f, 0, 0.5f, 0.2f, 0.3f}));
  npy::Write(dir.file("got.npy"), F32({2, 3}, {0.1f, 0.8f, 0, 0.1f, 0.2f, 0.3f}));
  CompareOptions options;
  options.gates = {ParseGate("argmax"), ParseGate("maxabs<=0.5")};
  const CompareReport r = CompareOutputs(dir.file("ref.npy"), dir.file("got.npy"), options);
  ASSERT_EQ(r.tensors.size(), 1u);
  EXPECT_EQ(r.tensors[0].name, "ref");  // single files are named after REF
  ASSERT_EQ(r.tensors[0].gates.size(), 2u);
  EXPECT_FALSE(r.tensors[0].gates[0].passed);  // row 1: 0 vs 2
  EXPECT_TRUE(r.tensors[0].gates[1].passed);   // max abs 0.4
  EXPECT_FALSE(r.gates_passed());
  EXPECT_EQ(r.exit_code(), 1);
  EXPECT_NE(RenderText(r).find("FAIL  argmax equal in 1/2 rows"), std::string::npos) << RenderText(r);

  options.gates = {ParseGate("ref:maxabs<=0.5")};
  EXPECT_EQ(CompareOutputs(dir.file("ref.npy"), dir.file("got.npy"), options).exit_code(), 0);
  options.gates = {ParseGate("out7:argmax")};  // names no compared tensor
  EXPECT_EQ(KindOfCompare([&] { CompareOutputs(dir.file("ref.npy"), dir.file("got.npy"), options); }),
            ErrorKind::kUsage);
}

TEST(Compare, BadPathsAndMixedKinds) {
  TempDir dir;
  npy::Write(dir.file("a.npy"), F32({1}, {1}));
  EXPECT_EQ(KindOfCompare([&] { CompareOutputs(dir.file("a.npy"), dir.file("missing.npy"), {}); }),
            ErrorKind::kBadInput);
  EXPECT_EQ(KindOfCompare([&] { CompareOutputs(dir.file("a.npy"), dir.path().string(), {}); }), ErrorKind::kUsage);
  CompareOptions bad;
  bad.got_accelerator = "npu";
  EXPECT_EQ(KindOfCompare([&] { CompareOutputs(dir.file("a.npy"), dir.file("a.npy"), bad); }), ErrorKind::kUsage);
  WriteTextCompare(dir.file("broken.npy"), "not an npy");
  EXPECT_EQ(KindOfCompare([&] { CompareOutputs(dir.file("a.npy"), dir.file("broken.npy"), {}); }),
            ErrorKind::kBadInput);
  npy::Write(dir.file("b.npy"), F32({2}, {1, 2}));
  EXPECT_EQ(KindOfCompare([&] { CompareOutputs(dir.file("a.npy"), dir.file("b.npy"), {}); }), ErrorKind::kBadInput);
}

TEST(Compare, BitIdenticalGpuRunIsASilentFallback) {
  TempDir dir;
  const std::string ref = dir.file("cpu"), got = dir.file("gpu");
  std::filesystem::create_directories(ref);
  std::filesystem::create_directories(got);
  npy::Write(ref + "/out0.npy", F32({3}, {0.25f, 1.5f, -2}));
  npy::Write(got + "/out0.npy", F32({3}, {0.25f, 1.5f, -2}));
  // An integer output (class ids) may be exact on a real GPU run: not counted.
  npy::Write(ref + "/out1.npy", I32({2}, {3, 4}));
  npy::Write(got + "/out1.npy", I32({2}, {3, 4}));

  const CompareReport unmarked = CompareOutputs(ref, got, {});
  EXPECT_FALSE(unmarked.silent_fallback_suspected);
  EXPECT_EQ(unmarked.exit_code(), 0);
  EXPECT_EQ(SilentFallbackWarning(unmarked), "");

  CompareOptions gpu;
  gpu.got_accelerator = "gpu";
  CompareReport r = CompareOutputs(ref, got, gpu);
  EXPECT_TRUE(r.silent_fallback_suspected);
  EXPECT_EQ(r.bit_identical_float, std::vector<std::string>{"out0"});
  EXPECT_EQ(r.exit_code(), 1);
  EXPECT_NE(RenderText(r).find("!! SILENT FALLBACK SUSPECTED"), std::string::npos);
  r.residency =
      probe::ParseDelegateLog("No operations will run on the GPU, and all 3 operations will run on the CPU.\n");
  EXPECT_NE(SilentFallbackWarning(r).find("The log agrees: no op ran on the GPU"), std::string::npos);

  CompareOptions cpu;
  cpu.got_accelerator = "cpu";
  EXPECT_FALSE(CompareOutputs(ref, got, cpu).silent_fallback_suspected);

  // fp16 drift in the last digits: a real GPU run, no warning.
  npy::Write(got + "/out0.npy", F32({3}, {0.2500305f, 1.5f, -2}));
  const CompareReport drift = CompareOutputs(ref, got, gpu);
  EXPECT_FALSE(drift.silent_fallback_suspected);
  EXPECT_EQ(drift.exit_code(), 0);
}

TEST(Compare, PartlyIdenticalGpuOutputsGetANote) {
  TempDir dir;
  const std::string ref = dir.file("r"), got = dir.file("g");
  std::filesystem::create_directories(ref);
  std::filesystem::create_directories(got);
  npy::Write(ref + "/out0.npy", F32({2}, {1, 2}));
  npy::Write(got + "/out0.npy", F32({2}, {1, 2}));
  npy::Write(ref + "/out1.npy", F32({2}, {1, 2}));
  npy::Write(got + "/out1.npy", F32({2}, {1.001f, 2}));
  CompareOptions gpu;
  gpu.got_accelerator = "gpu";
  const CompareReport r = CompareOutputs(ref, got, gpu);
  EXPECT_FALSE(r.silent_fallback_suspected);
  EXPECT_NE(SilentFallbackWarning(r).find("out0 bit-identical to REF in a GPU run"), std::string::npos);
}

TEST(Compare, ResidencyFromALogFile) {
  TempDir dir;
  WriteTextCompare(
      dir.file("logcat.txt"),
      "03-12 10:11:12.345  4242  4290 E tflite  : Following operations are not supported by GPU delegate:\n"
      "03-12 10:11:12.345  4242  4290 E tflite  : GATHER_ND: Operation is not supported.\n"
      "03-12 10:11:12.346  4242  4290 E tflite  : 120 operations will run on the GPU, and the remaining 4 "
      "operations will run on the CPU.\n"
      "03-12 10:11:12.350  4242  4290 I tflite  : Replacing 120 out of 124 node(s) with delegate "
      "(TfLiteGpuDelegateV2) node, yielding 3 partitions.\n"
      "03-12 10:11:12.360  4242  4290 E tflite  : Failed to apply GPU delegate.\n");
  const probe::Residency r = ReadResidencyLog(dir.file("logcat.txt"));
  const std::string text = RenderResidency(r, "logcat.txt");
  EXPECT_NE(text.find("residency (logcat.txt): 120/124 ops on the GPU, 4 on the CPU; 3 GPU partition(s)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("delegate TfLiteGpuDelegateV2: 120/124 nodes, 3 partition(s)"), std::string::npos) << text;
  EXPECT_NE(text.find("    GATHER_ND: Operation is not supported."), std::string::npos) << text;
  EXPECT_NE(text.find("compile / prepare failures:\n    Failed to apply GPU delegate."), std::string::npos) << text;
  EXPECT_EQ(KindOfCompare([&] { ReadResidencyLog(dir.file("absent.txt")); }), ErrorKind::kIo);
}

}  // namespace
}  // namespace gpuclean::analyze
