// The residency wordings of the on-device reports (../shared/reference/,
// FACTS.md) that delegate_log_test.cc does not already cover: the whole-graph
// compile ceiling (multi-partition + "Failed to compile model"), newer TFLite
// "for the whole graph" / "for subgraph N" tails, singular counts, the
// reasons Mali rejects ops with, and a LiteRT.js console transcript.
#include <gtest/gtest.h>

#include "gpuclean/probe.h"

namespace gpuclean::probe {
namespace {

TEST(DelegateLogWordings, CompileCeilingTwoPartitionsThenFailure) {
  // wav2vec2 on a Pixel 8a: op-clean, yet the fused graph does not compile.
  const Residency r = ParseDelegateLog(
      "11-02 14:03:55.120  9001  9017 I tflite  : Initialized TensorFlow Lite runtime.\n"
      "11-02 14:03:55.410  9001  9017 I tflite  : Replacing 923 out of 1008 node(s) with delegate (LITERT_CL) node, "
      "yielding 2 partitions for the whole graph.\n"
      "11-02 14:03:58.902  9001  9017 E tflite  : Failed to compile model\n"
      "11-02 14:03:58.903  9001  9017 E LiteRtCompiledModel: Failed to create compiled model\n");
  EXPECT_EQ(r.gpu_ops, 923);
  EXPECT_EQ(r.cpu_ops, 85);
  EXPECT_EQ(r.total_ops, 1008);
  EXPECT_EQ(r.partitions, 2);
  EXPECT_EQ(r.fully_delegated, false);
  ASSERT_EQ(r.compile_errors.size(), 2u);
  EXPECT_EQ(r.compile_errors[0], "Failed to compile model");
  ASSERT_EQ(r.delegations.size(), 1u);
  EXPECT_EQ(r.delegations[0].delegate, "LITERT_CL");
}

TEST(DelegateLogWordings, PadV2SplitsTheGraph) {
  // ResNet stem max-pool lowered to PADV2: 36 of 61 nodes, 2 partitions.
  const Residency r = ParseDelegateLog(
      "E tflite  : Following operations are not supported by GPU delegate:\n"
      "E tflite  : PADV2: Operation is not supported.\n"
      "I tflite  : Replacing 36 out of 61 node(s) with delegate (TfLiteGpuDelegateV2) node, yielding 2 partitions "
      "for subgraph 0.\n");
  EXPECT_EQ(r.gpu_ops, 36);
  EXPECT_EQ(r.total_ops, 61);
  EXPECT_EQ(r.partitions, 2);
  ASSERT_EQ(r.unsupported.size(), 1u);
  EXPECT_EQ(r.unsupported[0], (UnsupportedOp{"PADV2", "Operation is not supported."}));
}

TEST(DelegateLogWordings, FullResidencySinglePartition) {
  // SAM 2.1 Hiera-Tiny image encoder: 862/862 on LITERT_CL.
  const Residency r = ParseDelegateLog(
      "I tflite  : Replacing 862 out of 862 node(s) with delegate (LITERT_CL) node, yielding 1 partitions for the "
      "whole graph.\n");
  EXPECT_EQ(r.gpu_ops, 862);
  EXPECT_EQ(r.cpu_ops, 0);
  EXPECT_EQ(r.partitions, 1);
  EXPECT_EQ(r.fully_delegated, true);
  EXPECT_NE(Summarize(r).find("862/862 ops on the GPU, 0 on the CPU; 1 GPU partition(s); fully delegated"),
            std::string::npos)
      << Summarize(r);
}

TEST(DelegateLogWordings, MaliRejectionReasons) {
  // Mimi RVQ on Mali: int64 CAST and EMBEDDING_LOOKUP keep 114 nodes off the GPU.
  const Residency r = ParseDelegateLog(
      "ERROR: Following operations are not supported by GPU delegate:\n"
      "CAST: Tensor type(INT64) is not supported\n"
      "EMBEDDING_LOOKUP: Empty quantization params\n"
      "CONV_2D: input must be a runtime tensor\n"
      "RESHAPE: Tensor dimensions must be less than 5\n"
      "TRANSPOSE: Permutation for transpose is invalid\n"
      "464 operations will run on the GPU, and the remaining 114 operations will run on the CPU.\n"
      "INFO: Replacing 464 out of 578 node(s) with delegate (TfLiteGpuDelegateV2) node, yielding 5 partitions.\n");
  EXPECT_EQ(r.gpu_ops, 464);  // the count line and the Replacing line are the same fact, not summed
  EXPECT_EQ(r.cpu_ops, 114);
  EXPECT_EQ(r.partitions, 5);
  const std::vector<UnsupportedOp> want = {{"CAST", "Tensor type(INT64) is not supported"},
                                           {"EMBEDDING_LOOKUP", "Empty quantization params"},
                                           {"CONV_2D", "input must be a runtime tensor"},
                                           {"RESHAPE", "Tensor dimensions must be less than 5"},
                                           {"TRANSPOSE", "Permutation for transpose is invalid"}};
  EXPECT_EQ(r.unsupported, want);
}

TEST(DelegateLogWordings, SingularCounts) {
  const Residency r =
      ParseDelegateLog("1 operation will run on the GPU, and the remaining 1 operation will run on the CPU.\n");
  EXPECT_EQ(r.gpu_ops, 1);
  EXPECT_EQ(r.cpu_ops, 1);
  const Residency p = ParseDelegateLog(
      "Replacing 1 out of 1 node(s) with delegate (TfLiteGpuDelegateV2) node, yielding 1 partition.\n");
  EXPECT_EQ(p.partitions, 1);
  EXPECT_EQ(p.fully_delegated, true);
}

TEST(DelegateLogWordings, LiteRtJsConsoleTranscript) {
  // What a browser console shows for LiteRT.js on WebGPU (LITERTJS.md), copied
  // from DevTools with its source-location suffixes.
  const Residency r = ParseDelegateLog(
      "litert_wasm_internal.js:1 INFO: Created TensorFlow Lite XNNPACK delegate for CPU.\n"
      "DENSIFY: Operation is not supported.\n"
      "159 operations will run on the GPU, and the remaining 229 operations will run on the CPU.\n"
      "Model not fully compiled for webgpu. Partially delegating to WASM execution.\n");
  EXPECT_EQ(r.gpu_ops, 159);
  EXPECT_EQ(r.total_ops, 388);
  EXPECT_EQ(r.fallback, "partial");
  EXPECT_EQ(r.fully_delegated, false);
}

}  // namespace
}  // namespace gpuclean::probe
