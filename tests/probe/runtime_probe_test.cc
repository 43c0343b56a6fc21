// ctest-labels: litert webgpu slow
// Real runs: LiteRT.js WebGPU in headless Chromium (SwiftShader) and the
// wasm CPU path, on fixture models and a builder-made graph. Node, Chromium
// and the npm packages come from tools/setup.sh; these tests never skip.
//
// All WebGPU runs go through one RunProbes call (one Chromium launch, one
// WebGPU device): the first compile pays ~2-4 s for device creation and each
// first run pays for shader compilation, so fewer, bigger calls keep the
// suite fast on two cores. For the same reason it is one gtest TEST: ctest
// starts a process per TEST, and each would repeat the whole batch. The
// checks are separate functions, each reported under its own trace.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include "gpuclean/builder.h"
#include "gpuclean/format.h"
#include "gpuclean/probe.h"
#include "support/test_support.h"

namespace gpuclean::probe {
namespace {
namespace fs = std::filesystem;

std::vector<float> FloatsRuntimeProbe(const npy::Array& a) {
  EXPECT_EQ(a.dtype, tfl::TensorType_FLOAT32);
  return std::vector<float>(a.as<float>(), a.as<float>() + a.num_elements());
}

double Correlation(const std::vector<float>& a, const std::vector<float>& b) {
  double sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0;
  const double n = static_cast<double>(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    sa += a[i], sb += b[i], saa += double(a[i]) * a[i], sbb += double(b[i]) * b[i], sab += double(a[i]) * b[i];
  }
  const double cov = sab / n - sa / n * sb / n;
  return cov / std::sqrt((saa / n - sa / n * sa / n) * (sbb / n - sb / n * sb / n));
}

double MaxAbsDiff(const std::vector<float>& a, const std::vector<float>& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(double(a[i]) - b[i]));
  return m;
}

bool AllFinite(const std::vector<float>& a) {
  for (float v : a)
    if (!std::isfinite(v)) return false;
  return true;
}

// x[1,4,4,8] -> RESHAPE [1,4,4,2,4] -> RELU -> RESHAPE [1,4,4,8]: the GPU
// delegate rejects every op of a graph that holds a rank-5 tensor.
std::string WriteRankFiveGraph(const std::string& path) {
  builder::GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 4, 4, 8});
  const int y = b.Reshape(b.Relu(b.Reshape(x, {1, 4, 4, 2, 4})), {1, 4, 4, 8});
  b.Output(y);
  format::WriteModel(b.Finish(), path);
  return path;
}

// x -> an unknown custom op: LiteRT cannot prepare the CPU part, and run()
// would hand back stale buffers if the harness did not read the log.
std::string WriteUnknownCustomOpGraph(const std::string& path) {
  builder::GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 8});
  b.Output(b.Custom("GpucleanNoSuchOp", {x}, {}, {{tfl::TensorType_FLOAT32, {1, 8}}}).at(0));
  format::WriteModel(b.Finish(), path);
  return path;
}

// Every run of the suite, made in one RunProbes call.
struct Batch {
  testing::TempDir dir;
  std::map<std::string, ProbeRequest> requests;
  std::map<std::string, ProbeResult> results;
  double wall_ms = 0;
};
const Batch* batch = nullptr;

void RunBatch(Batch& b) {
  auto add = [&](const std::string& name, const std::string& model, Runtime runtime, const std::string& precision) {
    ProbeRequest q;
    q.model_path = model;
    q.runtime = runtime;
    q.precision = precision;
    q.seed = 7;
    q.out_dir = b.dir.file(name);
    b.requests[name] = q;
  };
  const std::string selfie = testing::FixtureModel("selfie_segmentation.tflite");
  const std::string face = testing::FixtureModel("face_detection_short_range.tflite");
  const std::string sparse = testing::FixtureModel("face_detection_full_range_sparse.tflite");
  add("selfie_webgpu", selfie, Runtime::kLiteRtWebGpu, "fp32");
  add("selfie_wasm", selfie, Runtime::kLiteRtWasm, "fp32");
  add("face_webgpu", face, Runtime::kLiteRtWebGpu, "fp32");
  add("face_webgpu_fp16", face, Runtime::kLiteRtWebGpu, "fp16");
  add("face_wasm", face, Runtime::kLiteRtWasm, "fp32");
  add("sparse_webgpu", sparse, Runtime::kLiteRtWebGpu, "fp32");
  add("sparse_wasm", sparse, Runtime::kLiteRtWasm, "fp32");
  add("rank5_webgpu", WriteRankFiveGraph(b.dir.file("rank5.tflite")), Runtime::kLiteRtWebGpu, "fp32");
  add("custom_webgpu", WriteUnknownCustomOpGraph(b.dir.file("custom.tflite")), Runtime::kLiteRtWebGpu, "fp32");
  b.requests["sparse_webgpu"].repeat = 2;  // its wrong numbers must at least be stable

  std::vector<ProbeRequest> list;
  std::vector<std::string> names;
  for (const auto& [name, q] : b.requests) names.push_back(name), list.push_back(q);
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<ProbeResult> results = RunProbes(list);
  b.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  for (size_t i = 0; i < names.size(); ++i) b.results[names[i]] = std::move(results[i]);
}

// A result that must have succeeded.
const ProbeResult& Result(const std::string& name) {
  const ProbeResult& r = batch->results.at(name);
  EXPECT_TRUE(r.ok) << name << ": " << r.error;
  return r;
}

void SelfieSegmentationIsFullyDelegatedAndMatchesWasm() {
  const ProbeResult& gpu = Result("selfie_webgpu");
  const ProbeResult& cpu = Result("selfie_wasm");
  ASSERT_TRUE(gpu.ok && cpu.ok);
  EXPECT_EQ(gpu.residency.fully_delegated, true) << Summarize(gpu.residency);
  EXPECT_TRUE(gpu.residency.unsupported.empty());
  EXPECT_TRUE(gpu.residency.compile_errors.empty());
  EXPECT_EQ(gpu.residency.counts_source, "model");
  EXPECT_EQ(gpu.residency.cpu_ops, 0);
  EXPECT_GT(gpu.residency.gpu_ops.value_or(0), 0);
  EXPECT_EQ(gpu.is_fully_accelerated, true);
  ASSERT_EQ(gpu.outputs.size(), 1u);
  ASSERT_EQ(cpu.outputs.size(), 1u);
  EXPECT_EQ(gpu.outputs[0].shape, cpu.outputs[0].shape);
  const auto g = FloatsRuntimeProbe(gpu.outputs[0]), c = FloatsRuntimeProbe(cpu.outputs[0]);
  EXPECT_TRUE(AllFinite(g));
  EXPECT_GE(Correlation(g, c), 0.999);
  EXPECT_LT(MaxAbsDiff(g, c), 1e-3);
  // Same seed, same generator: both harnesses fed the same bytes.
  EXPECT_EQ(npy::Read(batch->requests.at("selfie_wasm").out_dir + "/in0.npy").data,
            npy::Read(batch->requests.at("selfie_webgpu").out_dir + "/in0.npy").data);
}

void FaceDetectionShortRangeFp32AndFp16() {
  const ProbeResult& gpu = Result("face_webgpu");
  const ProbeResult& half = Result("face_webgpu_fp16");
  const ProbeResult& cpu = Result("face_wasm");
  ASSERT_TRUE(gpu.ok && half.ok && cpu.ok);
  EXPECT_EQ(gpu.residency.fully_delegated, true) << Summarize(gpu.residency);
  EXPECT_EQ(half.residency.fully_delegated, true) << Summarize(half.residency);
  ASSERT_EQ(gpu.outputs.size(), 2u);
  ASSERT_EQ(cpu.outputs.size(), 2u);
  ASSERT_EQ(half.outputs.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    SCOPED_TRACE(i);
    const auto g = FloatsRuntimeProbe(gpu.outputs[i]), h = FloatsRuntimeProbe(half.outputs[i]),
               c = FloatsRuntimeProbe(cpu.outputs[i]);
    EXPECT_GE(Correlation(g, c), 0.9999);
    EXPECT_LT(MaxAbsDiff(g, c), 1e-3);  // measured ~1e-4
    // fp16 storage: bigger but bounded rounding, still highly correlated.
    EXPECT_GE(Correlation(h, c), 0.999);
    EXPECT_LT(MaxAbsDiff(h, c), 0.5);
    EXPECT_GT(MaxAbsDiff(h, c), MaxAbsDiff(g, c));  // fp16 really was used
  }
  EXPECT_EQ(gpu.meta["precision"], "fp32");
  EXPECT_EQ(half.meta["precision"], "fp16");
}

void SparseFaceDetectorPartiallyDelegatesAndDiverges() {
  const ProbeResult& gpu = Result("sparse_webgpu");
  const ProbeResult& cpu = Result("sparse_wasm");
  ASSERT_TRUE(gpu.ok && cpu.ok);
  const Residency& r = gpu.residency;
  EXPECT_EQ(r.fully_delegated, false);
  EXPECT_EQ(r.counts_source, "log");
  EXPECT_EQ(r.gpu_ops, 159);
  EXPECT_EQ(r.cpu_ops, 229);
  EXPECT_EQ(r.total_ops, 388);
  EXPECT_EQ(r.fallback, "partial");
  bool densify = false;
  for (const UnsupportedOp& u : r.unsupported) densify |= u.op == "DENSIFY";
  EXPECT_TRUE(densify) << ToJson(r).dump();
  EXPECT_EQ(gpu.is_fully_accelerated, false);
  // Measured: the partially delegated graph returns finite but wrong
  // numbers (the box regressors lose their correlation with the CPU run).
  ASSERT_EQ(gpu.outputs.size(), cpu.outputs.size());
  bool diverged = false;
  for (size_t i = 0; i < gpu.outputs.size(); ++i) {
    const auto g = FloatsRuntimeProbe(gpu.outputs[i]), c = FloatsRuntimeProbe(cpu.outputs[i]);
    diverged |= !AllFinite(g) || Correlation(g, c) < 0.95 || MaxAbsDiff(g, c) > 1.0;
  }
  EXPECT_TRUE(diverged);
}

void RankFiveGraphIsRejectedAlthoughTheFlagSaysAccelerated() {
  const ProbeResult& gpu = Result("rank5_webgpu");
  ASSERT_TRUE(gpu.ok);
  const Residency& r = gpu.residency;
  EXPECT_EQ(r.gpu_ops, 0);
  EXPECT_EQ(r.cpu_ops, 3);
  EXPECT_EQ(r.fully_delegated, false);
  bool rank_reason = false;
  for (const UnsupportedOp& u : r.unsupported)
    rank_reason |= u.reason.find("Tensor dimensions must be less than 5") != std::string::npos;
  EXPECT_TRUE(rank_reason) << ToJson(r).dump();
  // The trap: LiteRT.js's flag reads true, the log says nothing ran on the GPU.
  EXPECT_EQ(gpu.is_fully_accelerated, true);
  // It still ran (on the CPU): relu of the input.
  const auto in = FloatsRuntimeProbe(npy::Read(batch->requests.at("rank5_webgpu").out_dir + "/in0.npy"));
  const auto out = FloatsRuntimeProbe(gpu.outputs.at(0));
  ASSERT_EQ(in.size(), out.size());
  for (size_t i = 0; i < in.size(); ++i) EXPECT_EQ(out[i], std::max(in[i], 0.0f));
}

void UnpreparableModelIsAnErrorNotStaleOutputs() {
  const ProbeResult& r = batch->results.at("custom_webgpu");
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.outputs.empty());
  EXPECT_NE(r.error.find("GpucleanNoSuchOp"), std::string::npos) << r.error;
  EXPECT_EQ(r.error.find('\n'), std::string::npos) << r.error;
  EXPECT_EQ(r.meta.value("ok", true), false);
  EXPECT_FALSE(fs::exists(batch->requests.at("custom_webgpu").out_dir + "/out0.npy"));
  // The batch went on: the other jobs of the same Chromium ran.
  EXPECT_TRUE(batch->results.at("rank5_webgpu").ok);
}

void CppAndHarnessParsersAgreeOnEveryLog() {
  for (const auto& [name, r] : batch->results) {
    SCOPED_TRACE(name);
    if (!r.ok) continue;
    if (!r.meta.contains("harness_residency")) continue;  // the wasm harness has none
    const nlohmann::json& js = r.meta["harness_residency"];
    // Counts filled from the model are gpuclean's addition; compare the rest.
    const Residency parsed = ParseDelegateLog([&] {
      std::string text;
      for (const auto& l : r.meta["log"]) text += l.get<std::string>() + "\n";
      return text;
    }());
    const nlohmann::json cpp = ToJson(parsed);
    for (const char* key : {"gpu_ops", "cpu_ops", "total_ops", "partitions", "fully_delegated", "fallback",
                            "delegate_initialized", "unsupported", "compile_errors", "delegations"})
      EXPECT_EQ(cpp[key], js[key]) << key;
  }
}

void MetaRecordsTimingsAndAdapter() {
  const ProbeResult& gpu = Result("face_webgpu");
  EXPECT_GT(gpu.compile_ms, 0);
  EXPECT_GT(gpu.run_ms, 0);
  EXPECT_EQ(gpu.meta["adapter"]["architecture"], "swiftshader");
  EXPECT_EQ(gpu.meta["runtime_id"], "litert-webgpu");
  EXPECT_TRUE(gpu.meta["browser_launch_ms"].is_number());
  const nlohmann::json written =
      nlohmann::json::parse(std::ifstream(batch->requests.at("face_webgpu").out_dir + "/meta.json"));
  EXPECT_EQ(written["residency"], ToJson(gpu.residency));
  // One line per result, for the record in the test log.
  for (const auto& [name, r] : batch->results)
    std::cerr << "[probe] " << name << ": compile " << r.compile_ms << " ms, run " << r.run_ms << " ms (first "
              << r.run_ms_first << "), harness " << r.harness_ms << " ms; " << Summarize(r.residency) << "\n";
  std::cerr << "[probe] whole batch " << batch->wall_ms << " ms\n";
}

TEST(RuntimeProbe, WebGpuAndWasmOnFixturesAndBuilderGraphs) {
  Batch b;
  RunBatch(b);
  batch = &b;
  {
    SCOPED_TRACE("SelfieSegmentationIsFullyDelegatedAndMatchesWasm");
    SelfieSegmentationIsFullyDelegatedAndMatchesWasm();
  }
  {
    SCOPED_TRACE("FaceDetectionShortRangeFp32AndFp16");
    FaceDetectionShortRangeFp32AndFp16();
  }
  {
    SCOPED_TRACE("SparseFaceDetectorPartiallyDelegatesAndDiverges");
    SparseFaceDetectorPartiallyDelegatesAndDiverges();
  }
  {
    SCOPED_TRACE("RankFiveGraphIsRejectedAlthoughTheFlagSaysAccelerated");
    RankFiveGraphIsRejectedAlthoughTheFlagSaysAccelerated();
  }
  {
    SCOPED_TRACE("UnpreparableModelIsAnErrorNotStaleOutputs");
    UnpreparableModelIsAnErrorNotStaleOutputs();
  }
  {
    SCOPED_TRACE("CppAndHarnessParsersAgreeOnEveryLog");
    CppAndHarnessParsersAgreeOnEveryLog();
  }
  {
    SCOPED_TRACE("MetaRecordsTimingsAndAdapter");
    MetaRecordsTimingsAndAdapter();
  }
  batch = nullptr;
}

}  // namespace
}  // namespace gpuclean::probe
