// Runs models on real runtimes through the Node harnesses in probe/:
// litert_run.mjs (LiteRT.js wasm CPU, plain Node), litert_webgpu.mjs
// (LiteRT.js WebGPU in headless Chromium) and onnx_run.mjs (onnxruntime-node
// CPU, for .onnx models), batching requests per harness. Starting processes
// is process.cc's, finding the pieces environment.cc's, reading results
// results.cc's; the long-running WebGPU harness is webgpu_session.cc's.
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <map>

#include "gpuclean/error.h"
#include "gpuclean/io.h"
#include "gpuclean/probe.h"
#include "gpuclean/stopwatch.h"
#include "probe/internal.h"

namespace gpuclean::probe {
namespace fs = std::filesystem;

Runtime ParseRuntime(const std::string& name) {
  return ::gpuclean::ParseRuntime(name, {Runtime::kLiteRtWasm, Runtime::kLiteRtWebGpu, Runtime::kOnnxRuntime});
}

namespace internal {

void CheckRequest(const ProbeRequest& q) {
  if (q.out_dir.empty()) throw Error(ErrorKind::kUsage, "probe needs an output folder (--out DIR)");
  if (q.precision != "fp32" && q.precision != "fp16")
    throw Error(ErrorKind::kUsage, "--precision expects fp32 or fp16, got '" + q.precision + "'");
  const bool onnx = q.runtime == Runtime::kOnnxRuntime;
  if (onnx && q.precision != "fp32")
    throw Error(ErrorKind::kUsage,
                "--precision fp16 needs --runtime litert-webgpu (onnxruntime runs the model's own types)");
  if (onnx && q.residency_only)
    throw Error(ErrorKind::kUsage, "residency-only needs --runtime litert-webgpu (onnxruntime has no GPU delegate)");
  if (!onnx && (!q.output_names.empty() || q.threads != 1 || !q.optimize || !q.dims.empty()))
    throw Error(ErrorKind::kUsage, "--outputs, --threads, --no-optimize and --dim need --runtime onnxruntime");
  if (q.threads < 1) throw Error(ErrorKind::kUsage, "--threads must be at least 1");
  for (const std::string& name : q.output_names)
    if (name.empty() || name.find(',') != std::string::npos)
      throw Error(ErrorKind::kUsage, "--outputs: bad output name '" + name + "'");
  for (const auto& [name, size] : q.dims)
    if (name.empty() || size < 0) throw Error(ErrorKind::kUsage, "--dim expects NAME=SIZE with SIZE >= 0");
  if (q.runtime == Runtime::kLiteRtWasm && q.precision != "fp32")
    throw Error(ErrorKind::kUsage, "--precision fp16 needs --runtime litert-webgpu (the wasm CPU path is fp32)");
  if (q.runtime == Runtime::kLiteRtWasm && q.residency_only)
    throw Error(ErrorKind::kUsage, "residency-only needs --runtime litert-webgpu (wasm has no GPU delegate)");
  if (q.repeat < 1) throw Error(ErrorKind::kUsage, "--repeat must be at least 1");
  if (!fs::is_regular_file(q.model_path)) ThrowBadInput(q.model_path + ": no such model file");
  for (const auto& [key, file] : q.inputs)
    if (!fs::is_regular_file(file)) ThrowBadInput("--input " + key + "=" + file + ": no such file");
  std::error_code ec;
  fs::create_directories(q.out_dir, ec);
  if (ec || !fs::is_directory(q.out_dir))
    throw Error(ErrorKind::kIo, q.out_dir + ": cannot create output folder" + (ec ? ": " + ec.message() : ""));
}

nlohmann::json WebGpuJob(const ProbeRequest& q) {
  nlohmann::json inputs = nlohmann::json::array();
  for (const auto& [key, file] : q.inputs) inputs.push_back({{"key", key}, {"file", fs::absolute(file).string()}});
  return {{"model", fs::absolute(q.model_path).string()},
          {"out", fs::absolute(q.out_dir).string()},
          {"precision", q.precision},
          {"inputs", inputs},
          {"seed", q.seed},
          {"repeat", q.repeat},
          {"describe_residency", q.residency_only},
          {"accelerator", q.runtime == Runtime::kLiteRtWasm ? "wasm" : "webgpu"}};
}

}  // namespace internal

namespace {

using namespace internal;

std::vector<ProbeResult> RunWebGpu(const std::vector<const ProbeRequest*>& requests, const ProbeEnvironment& env) {
  const ScratchDir scratch("gpuclean-probe");
  nlohmann::json jobs = nlohmann::json::array();
  for (const ProbeRequest* q : requests) jobs.push_back(WebGpuJob(*q));
  WriteFileAtomically(scratch / "jobs.json", jobs.dump());
  const std::string harness = (fs::path(env.source_dir) / "probe" / "litert_webgpu.mjs").string();
  const Stopwatch t0;
  const ProcessResult p =
      RunProcess({env.node, harness, "--jobs", scratch / "jobs.json"}, {"GPUCLEAN_CHROMIUM=" + env.chromium},
                 scratch / "stdout", scratch / "stderr", HarnessTimeout());
  const double ms = t0.ms();
  std::vector<ProbeResult> results;
  for (const ProbeRequest* q : requests) results.push_back(Collect(*q, ms));
  // Exit 2 with per-job meta.json files is a per-model failure, reported in
  // the results. Without them, or with the harness's setup_failure mark (it
  // could not start Chromium or LiteRT.js), nothing ran at all.
  bool setup_failed = p.exit_code != 0;
  for (const ProbeResult& r : results) setup_failed &= r.meta.is_null() || r.meta.value("setup_failure", false);
  if (setup_failed) ThrowHarnessFailure("litert_webgpu.mjs", p);
  return results;
}

// One `onnx_run.mjs --batch` call for requests that share threads and
// optimize (session options are per process).
std::vector<ProbeResult> RunOnnx(const std::vector<const ProbeRequest*>& requests, const ProbeEnvironment& env) {
  const ScratchDir scratch("gpuclean-probe");
  nlohmann::json jobs = nlohmann::json::array();
  for (const ProbeRequest* q : requests) {
    nlohmann::json inputs = nlohmann::json::array();
    for (const auto& [key, file] : q->inputs) inputs.push_back({{"key", key}, {"file", fs::absolute(file).string()}});
    nlohmann::json job = {{"model", fs::absolute(q->model_path).string()},
                          {"out", fs::absolute(q->out_dir).string()},
                          {"inputs", inputs},
                          {"seed", q->seed},
                          {"repeat", q->repeat}};
    if (!q->output_names.empty()) job["outputs"] = q->output_names;
    if (!q->dims.empty()) {
      nlohmann::json dims = nlohmann::json::object();
      for (const auto& [name, size] : q->dims) dims[name] = size;
      job["dims"] = dims;
    }
    jobs.push_back(std::move(job));
  }
  WriteFileAtomically(scratch / "jobs.json", jobs.dump());
  const std::string harness = (fs::path(env.source_dir) / "probe" / "onnx_run.mjs").string();
  std::vector<std::string> argv = {
      env.node, harness, "--batch", scratch / "jobs.json", "--threads", std::to_string(requests.front()->threads)};
  if (!requests.front()->optimize) argv.push_back("--no-optimize");
  const Stopwatch t0;
  const ProcessResult p = RunProcess(argv, {}, scratch / "stdout", scratch / "stderr", HarnessTimeout());
  const double ms = t0.ms();
  std::vector<ProbeResult> results;
  for (const ProbeRequest* q : requests) results.push_back(Collect(*q, ms));
  // As for WebGPU: exit 2 with per-job meta.json files is a per-model
  // failure; no meta.json at all, or setup_failure (onnxruntime-node could
  // not load), means nothing ran.
  bool setup_failed = p.exit_code != 0;
  for (const ProbeResult& r : results) setup_failed &= r.meta.is_null() || r.meta.value("setup_failure", false);
  if (setup_failed) ThrowHarnessFailure("onnx_run.mjs", p);
  return results;
}

ProbeResult RunWasm(const ProbeRequest& q, const ProbeEnvironment& env) {
  const ScratchDir scratch("gpuclean-probe");
  const std::string harness = (fs::path(env.source_dir) / "probe" / "litert_run.mjs").string();
  std::vector<std::string> argv = {env.node,
                                   harness,
                                   fs::absolute(q.model_path).string(),
                                   "--out",
                                   fs::absolute(q.out_dir).string(),
                                   "--seed",
                                   std::to_string(q.seed),
                                   "--repeat",
                                   std::to_string(q.repeat)};
  for (const auto& [key, file] : q.inputs) {
    argv.push_back("--input");
    argv.push_back(key + "=" + fs::absolute(file).string());
  }
  const Stopwatch t0;
  const ProcessResult p = RunProcess(argv, {}, scratch / "stdout", scratch / "stderr", HarnessTimeout());
  const double ms = t0.ms();
  ProbeResult r = Collect(q, ms);
  if (p.exit_code != 0 && r.meta.is_null()) ThrowHarnessFailure("litert_run.mjs", p);
  return r;
}

}  // namespace

void CheckTestLane(Runtime runtime) {
  const char* lanes = std::getenv("GPUCLEAN_TEST_LANES");
  if (!lanes || runtime == Runtime::kOurs) return;
  const std::string declared = lanes;
  const bool webgpu = runtime == Runtime::kLiteRtWebGpu;
  if (declared.find("litert") == std::string::npos || (webgpu && declared.find("webgpu") == std::string::npos))
    throw Error(ErrorKind::kInternal,
                fmt::format("this test's lane is '{}' but it starts {}: declare '// ctest-labels: litert{}' on the "
                            "first line of its file",
                            declared, RuntimeName(runtime), webgpu ? " webgpu" : ""));
}

std::vector<ProbeResult> RunProbes(const std::vector<ProbeRequest>& requests) {
  using internal::CheckRequest;
  for (const ProbeRequest& q : requests) CheckTestLane(q.runtime);
  ProbeNeeds needs;
  needs.litert = false;
  for (const ProbeRequest& q : requests) {
    CheckRequest(q);
    needs.litert |= q.runtime != Runtime::kOnnxRuntime;
    needs.browser |= q.runtime == Runtime::kLiteRtWebGpu;
    needs.onnxruntime |= q.runtime == Runtime::kOnnxRuntime;
  }
  for (size_t i = 0; i < requests.size(); ++i)
    for (size_t j = i + 1; j < requests.size(); ++j)
      if (fs::absolute(requests[i].out_dir) == fs::absolute(requests[j].out_dir))
        throw Error(ErrorKind::kUsage, "two probe requests share the output folder " + requests[i].out_dir);
  if (requests.empty()) return {};
  const ProbeEnvironment env = FindProbeEnvironment(needs);
  std::vector<ProbeResult> results(requests.size());
  std::vector<const ProbeRequest*> webgpu;
  std::vector<size_t> webgpu_index;
  // onnxruntime: one harness call per (threads, optimize).
  std::map<std::pair<int, bool>, std::vector<size_t>> onnx_groups;
  for (size_t i = 0; i < requests.size(); ++i) {
    if (requests[i].runtime == Runtime::kLiteRtWebGpu) {
      webgpu.push_back(&requests[i]);
      webgpu_index.push_back(i);
    } else if (requests[i].runtime == Runtime::kOnnxRuntime) {
      onnx_groups[{requests[i].threads, requests[i].optimize}].push_back(i);
    } else {
      results[i] = RunWasm(requests[i], env);
    }
  }
  for (const auto& [options, indices] : onnx_groups) {
    std::vector<const ProbeRequest*> group;
    for (size_t i : indices) group.push_back(&requests[i]);
    std::vector<ProbeResult> got = RunOnnx(group, env);
    for (size_t k = 0; k < got.size(); ++k) results[indices[k]] = std::move(got[k]);
  }
  if (!webgpu.empty()) {
    std::vector<ProbeResult> got = RunWebGpu(webgpu, env);
    for (size_t k = 0; k < got.size(); ++k) results[webgpu_index[k]] = std::move(got[k]);
  }
  return results;
}

std::vector<ProbeResult> RunOnArrays(const std::string& model_path,
                                     const std::vector<std::pair<std::string, npy::Array>>& inputs,
                                     const std::vector<Runtime>& runtimes, const std::string& webgpu_precision,
                                     uint32_t seed) {
  const ScratchDir dir("gpuclean-probe-arrays");
  std::vector<std::pair<std::string, std::string>> files;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string file = dir / fmt::format("in{}.npy", i);
    npy::Write(file, inputs[i].second);
    files.emplace_back(inputs[i].first, file);
  }
  std::vector<ProbeRequest> requests;
  for (Runtime runtime : runtimes) {
    ProbeRequest q;
    q.model_path = model_path;
    q.runtime = runtime;
    q.precision = runtime == Runtime::kLiteRtWebGpu ? webgpu_precision : "fp32";
    q.seed = seed;
    q.inputs = files;
    q.out_dir = dir / fmt::format("out{}", requests.size());
    requests.push_back(std::move(q));
  }
  return RunProbes(requests);
}

ProbeResult RunProbe(const ProbeRequest& request) {
  ProbeResult r = std::move(RunProbes({request}).at(0));
  if (!r.ok) ThrowBadInput(r.error);
  return r;
}

}  // namespace gpuclean::probe
