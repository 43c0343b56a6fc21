// ParseDelegateLog on log text written from the wordings LiteRT and the
// TFLite GPU delegate print (LITERTJS.md, FACTS.md, our own harness logs).
#include <gtest/gtest.h>

#include "gpuclean/probe.h"

namespace gpuclean::probe {
namespace {

// What the LiteRT.js WebGPU harness logged for the sparse face detector.
constexpr const char* kSparseFaceDetectorLog =
    R"([compile] INFO: [compiled_model.cc:812] Flatbuffer model initialized directly from incoming litert model.
[compile] INFO: [environment.cc:47] Adding options to the existing LiteRT environment
[compile] ERROR: Following operations are not supported by GPU delegate:
[compile] DENSIFY: Operation is not supported.
[compile] DEQUANTIZE: 
[compile] DEQUANTIZE: Dequantize for Densify is not supported
[compile] 159 operations will run on the GPU, and the remaining 229 operations will run on the CPU.
[compile] I1129 12:28:46.555000  755312 delegate_kernel.cc:855] Initializing WebGPU-based API from graph.
[compile] [LiteRT] Model not fully compiled for webgpu. Partially delegating to WASM execution.
[compile] INFO: Created TensorFlow Lite XNNPACK delegate for CPU.
)";

TEST(DelegateLog, PartialDelegationWithUnsupportedOps) {
  const Residency r = ParseDelegateLog(kSparseFaceDetectorLog);
  EXPECT_EQ(r.gpu_ops, 159);
  EXPECT_EQ(r.cpu_ops, 229);
  EXPECT_EQ(r.total_ops, 388);
  EXPECT_FALSE(r.partitions.has_value());
  EXPECT_EQ(r.fully_delegated, false);
  EXPECT_EQ(r.fallback, "partial");
  EXPECT_TRUE(r.delegate_initialized);
  EXPECT_EQ(r.counts_source, "log");
  const std::vector<UnsupportedOp> want = {{"DENSIFY", "Operation is not supported."},
                                           {"DEQUANTIZE", ""},
                                           {"DEQUANTIZE", "Dequantize for Densify is not supported"}};
  EXPECT_EQ(r.unsupported, want);
  EXPECT_TRUE(r.compile_errors.empty());
}

TEST(DelegateLog, FullDelegationHasNoCountLine) {
  // ML Drift says nothing about counts when it takes the whole graph.
  const Residency r = ParseDelegateLog(
      "[compile] I1129 12:28:19.312999  755312 delegate_webgpu.cc:243] Created a WebGPU environment with provided "
      "device.\n"
      "[compile] I1129 12:28:19.502000  755312 delegate_kernel.cc:855] Initializing WebGPU-based API from graph.\n"
      "[compile] INFO: Created TensorFlow Lite XNNPACK delegate for CPU.\n");
  EXPECT_EQ(r.fully_delegated, true);
  EXPECT_TRUE(r.delegate_initialized);
  EXPECT_FALSE(r.gpu_ops.has_value());
  EXPECT_EQ(r.counts_source, "");
  EXPECT_TRUE(r.unsupported.empty());
}

TEST(DelegateLog, NoGpuDelegateMeansUnknown) {
  const Residency r = ParseDelegateLog(
      "INFO: Created TensorFlow Lite XNNPACK delegate for CPU.\n"
      "INFO: Replacing 64 out of 64 node(s) with delegate (TfLiteXNNPackDelegate) node, yielding 1 partitions.\n");
  EXPECT_FALSE(r.fully_delegated.has_value());
  EXPECT_FALSE(r.gpu_ops.has_value());
  ASSERT_EQ(r.delegations.size(), 1u);  // kept, but XNNPACK is not the GPU
  EXPECT_EQ(r.delegations[0].delegate, "TfLiteXNNPackDelegate");
}

TEST(DelegateLog, RankFiveRejectionDespiteTheFlag) {
  // isFullyAccelerated reads true for this graph; the log says otherwise.
  const Residency r = ParseDelegateLog(
      "ERROR: Following operations are not supported by GPU delegate:\n"
      "RESHAPE: Tensor dimensions must be less than 5\n"
      "RELU: Tensor dimensions must be less than 5\n"
      "No operations will run on the GPU, and all 3 operations will run on the CPU.\n");
  EXPECT_EQ(r.gpu_ops, 0);
  EXPECT_EQ(r.cpu_ops, 3);
  EXPECT_EQ(r.total_ops, 3);
  EXPECT_EQ(r.partitions, 0);
  EXPECT_EQ(r.fully_delegated, false);
  ASSERT_EQ(r.unsupported.size(), 2u);
  EXPECT_EQ(r.unsupported[0].op, "RESHAPE");
  EXPECT_EQ(r.unsupported[1].reason, "Tensor dimensions must be less than 5");
}

TEST(DelegateLog, LogcatThreadtimeWithSeveralPartitionLines) {
  // Two subgraphs, each delegated in pieces, plus XNNPACK for the rest.
  const Residency r = ParseDelegateLog(
      "03-12 10:11:12.301  4242  4290 I tflite  : Created TensorFlow Lite delegate for GPU.\n"
      "03-12 10:11:12.345  4242  4290 E tflite  : Following operations are not supported by GPU delegate:\n"
      "03-12 10:11:12.345  4242  4290 E tflite  : GATHER_ND: Operation is not supported.\n"
      "03-12 10:11:12.345  4242  4290 E tflite  : SELECT_V2: Operation is not supported.\n"
      "03-12 10:11:12.346  4242  4290 E tflite  : 120 operations will run on the GPU, and the remaining 4 operations "
      "will run on the CPU.\n"
      "03-12 10:11:12.350  4242  4290 I tflite  : Replacing 120 out of 124 node(s) with delegate (TfLiteGpuDelegateV2) "
      "node, yielding 3 partitions.\n"
      "03-12 10:11:12.351  4242  4290 I tflite  : Replacing 4 out of 4 node(s) with delegate (TfLiteXNNPackDelegate) "
      "node, yielding 1 partitions.\n"
      "03-12 10:11:12.400  4242  4290 E tflite  : 30 operations will run on the GPU, and the remaining 0 operations "
      "will run on the CPU.\n"
      "03-12 10:11:12.401  4242  4290 I tflite  : Replacing 30 out of 30 node(s) with delegate (TfLiteGpuDelegateV2) "
      "node, yielding 1 partitions.\n");
  EXPECT_EQ(r.gpu_ops, 150);
  EXPECT_EQ(r.cpu_ops, 4);
  EXPECT_EQ(r.total_ops, 154);
  EXPECT_EQ(r.partitions, 4);  // GPU partitions only: 3 + 1
  EXPECT_EQ(r.fully_delegated, false);
  EXPECT_TRUE(r.delegate_initialized);
  ASSERT_EQ(r.unsupported.size(), 2u);
  EXPECT_EQ(r.unsupported[0], (UnsupportedOp{"GATHER_ND", "Operation is not supported."}));
  EXPECT_EQ(r.unsupported[1].op, "SELECT_V2");
  EXPECT_EQ(r.delegations.size(), 3u);
}

TEST(DelegateLog, LogcatBriefAndTagFormatsOnlyReplacingLines) {
  // Without the "operations will run" wording the counts come from the
  // Replacing lines; one partition each and nothing left over is full.
  const Residency full = ParseDelegateLog(
      "I/tflite  ( 4242): Replacing 88 out of 88 node(s) with delegate (TfLiteGpuDelegateV2) node, yielding 1 "
      "partitions.\n");
  EXPECT_EQ(full.gpu_ops, 88);
  EXPECT_EQ(full.cpu_ops, 0);
  EXPECT_EQ(full.partitions, 1);
  EXPECT_EQ(full.fully_delegated, true);

  const Residency split = ParseDelegateLog(
      "I tflite  : Replacing 88 out of 88 node(s) with delegate (TfLiteGpuDelegateV2) node, yielding 2 partitions.\n");
  EXPECT_EQ(split.fully_delegated, false);  // two partitions: a CPU gap between them elsewhere
  EXPECT_EQ(split.partitions, 2);
}

TEST(DelegateLog, CompileFailuresAreCollected) {
  const Residency r = ParseDelegateLog(
      "I tflite  : Created TensorFlow Lite delegate for GPU.\n"
      "E tflite  : TfLiteGpuDelegate Init: Failed to build program executable - Build program failure\n"
      "E tflite  : TfLiteGpuDelegate Prepare: delegate is not initialized\n"
      "E tflite  : Node number 862 (TfLiteGpuDelegateV2) failed to prepare.\n"
      "E tflite  : Failed to apply GPU delegate.\n"
      "ERROR: Encountered unresolved custom op: MyCustomOp.\n"
      "ERROR: Node number 3 (MyCustomOp) failed to prepare.\n");
  EXPECT_EQ(r.fully_delegated, false);
  ASSERT_EQ(r.compile_errors.size(), 5u);
  EXPECT_EQ(r.compile_errors[0], "TfLiteGpuDelegate Init: Failed to build program executable - Build program failure");
  EXPECT_EQ(r.compile_errors[2], "Failed to apply GPU delegate.");
  EXPECT_EQ(r.compile_errors[3], "Encountered unresolved custom op: MyCustomOp.");
}

TEST(DelegateLog, WholeModelFallbackToWasm) {
  // LiteRT.js's wording when the browser lacks JSPI: nothing runs on the GPU.
  const Residency r = ParseDelegateLog(
      "[LiteRT] Model not fully compiled for webgpu on non-JSPI browser. Falling back to WASM execution.\n");
  EXPECT_EQ(r.fallback, "wasm");
  EXPECT_EQ(r.fully_delegated, false);
  const Residency partial =
      ParseDelegateLog("[LiteRT] Model not fully compiled for webgpu. Partially delegating to WASM execution.\n");
  EXPECT_EQ(partial.fallback, "partial");
}

TEST(DelegateLog, UnsupportedListEndsAtTheFirstOtherLine) {
  const Residency r = ParseDelegateLog(
      "ERROR: Following operations are not supported by GPU delegate:\n"
      "CUSTOM (MyOp): Operation is not supported.\n"
      "INFO: Created TensorFlow Lite XNNPACK delegate for CPU.\n"
      "SOMETHING: later line that is not part of the list\n");
  ASSERT_EQ(r.unsupported.size(), 1u);
  EXPECT_EQ(r.unsupported[0].op, "CUSTOM (MyOp)");
}

TEST(DelegateLog, StripsPrefixes) {
  EXPECT_EQ(StripLogPrefixes("03-12 10:11:12.345  4242  4290 E tflite  : DENSIFY: x"), "DENSIFY: x");
  EXPECT_EQ(StripLogPrefixes("I/tflite  ( 4242): hello"), "hello");
  EXPECT_EQ(StripLogPrefixes("W tflite  : hello"), "hello");
  EXPECT_EQ(StripLogPrefixes("[run0] INFO: [environment.cc:36] hello"), "hello");
  EXPECT_EQ(StripLogPrefixes("I1129 12:28:19.502000  755312 delegate_kernel.cc:855] hello"), "hello");
  EXPECT_EQ(StripLogPrefixes("DEQUANTIZE: "), "DEQUANTIZE:");
  EXPECT_EQ(StripLogPrefixes("\r"), "");
}

TEST(DelegateLog, HandlesCarriageReturnsAndEmptyText) {
  EXPECT_FALSE(ParseDelegateLog("").fully_delegated.has_value());
  const Residency r = ParseDelegateLog(
      "E tflite  : 3 operations will run on the GPU, and the remaining 1 operations will run on the CPU.\r\n");
  EXPECT_EQ(r.gpu_ops, 3);
  EXPECT_EQ(r.cpu_ops, 1);
}

TEST(DelegateLog, JsonRoundTrip) {
  const Residency r = ParseDelegateLog(kSparseFaceDetectorLog);
  const nlohmann::json j = ToJson(r);
  EXPECT_EQ(j["gpu_ops"], 159);
  EXPECT_TRUE(j["partitions"].is_null());
  EXPECT_EQ(j["unsupported"][0]["op"], "DENSIFY");
  const Residency back = ResidencyFromJson(j);
  EXPECT_EQ(back.gpu_ops, r.gpu_ops);
  EXPECT_EQ(back.unsupported, r.unsupported);
  EXPECT_EQ(back.fallback, r.fallback);
  EXPECT_EQ(back.fully_delegated, r.fully_delegated);
  EXPECT_EQ(ToJson(back), j);
}

TEST(DelegateLog, SummaryNamesCountsAndFallback) {
  const std::string s = Summarize(ParseDelegateLog(kSparseFaceDetectorLog));
  EXPECT_NE(s.find("159/388 ops on the GPU, 229 on the CPU"), std::string::npos) << s;
  EXPECT_NE(s.find("not fully delegated"), std::string::npos) << s;
  EXPECT_NE(s.find("WASM"), std::string::npos) << s;
}

}  // namespace
}  // namespace gpuclean::probe
