// A harness's out folder (meta.json, out<i>.npy) as a ProbeResult, with the
// LiteRT residency re-parsed by ParseDelegateLog so every caller sees the
// same rules.
#include <filesystem>

#include "gpuclean/error.h"
#include "gpuclean/format.h"
#include "gpuclean/io.h"
#include "probe/internal.h"

namespace gpuclean::probe::internal {
namespace fs = std::filesystem;

namespace {

double NumberOr(const nlohmann::json& j, const char* key, double fallback) {
  return j.contains(key) && j[key].is_number() ? j[key].get<double>() : fallback;
}

// Log lines from meta.json, without the "[init]" lines that LiteRT.js prints
// while it starts (they belong to no model). Same filter as the harness.
std::string ModelLog(const nlohmann::json& meta) {
  std::string text;
  for (const auto& l : meta.value("log", nlohmann::json::array())) {
    if (!l.is_string()) continue;
    const std::string line = l.get<std::string>();
    if (line.rfind("[init]", 0) == 0 || line.rfind("[load]", 0) == 0) continue;
    text += line;
    text += '\n';
  }
  return text;
}

std::optional<int64_t> ModelOpCount(const std::string& model_path) {
  try {
    return static_cast<int64_t>(format::ReadModel(model_path).main().ops.size());
  } catch (const Error&) {
    return std::nullopt;  // LiteRT read it; our reader's view is only a bonus
  }
}

}  // namespace

ProbeResult Collect(const ProbeRequest& request, double harness_ms) {
  ProbeResult r;
  r.model_path = request.model_path;
  r.runtime = request.runtime;
  r.harness_ms = harness_ms;
  const fs::path meta_path = fs::path(request.out_dir) / "meta.json";
  if (!fs::exists(meta_path)) {
    r.error = std::string(RuntimeName(request.runtime)) + ": harness wrote no " + meta_path.string();
    return r;
  }
  try {
    r.meta = nlohmann::json::parse(ReadText(meta_path));
  } catch (const nlohmann::json::exception& e) {
    r.error = meta_path.string() + ": not JSON: " + e.what();
    return r;
  }
  const bool litert = request.runtime != Runtime::kOnnxRuntime;
  if (!r.meta.value("ok", false)) {
    r.error = std::string(RuntimeName(request.runtime)) + ": " + r.meta.value("error", std::string("failed"));
    // Residency is still worth having when the run failed after compiling.
    if (litert) r.residency = ParseDelegateLog(ModelLog(r.meta));
    return r;
  }
  // onnxruntime has no delegate: its residency stays "not applicable".
  if (litert) r.residency = ParseDelegateLog(ModelLog(r.meta));
  if (request.runtime == Runtime::kLiteRtWasm) {
    // The wasm accelerator is the CPU by definition.
    if (auto n = ModelOpCount(request.model_path)) {
      r.residency.gpu_ops = 0;
      r.residency.cpu_ops = *n;
      r.residency.total_ops = *n;
      r.residency.partitions = 0;
      r.residency.counts_source = "model";
    }
    r.residency.fully_delegated = false;
  } else if (litert && r.residency.fully_delegated.value_or(false) && !r.residency.gpu_ops) {
    if (auto n = ModelOpCount(request.model_path)) {
      r.residency.gpu_ops = *n;
      r.residency.cpu_ops = 0;
      r.residency.total_ops = *n;
      r.residency.partitions = 1;
      r.residency.counts_source = "model";
    }
  }
  if (r.meta.contains("is_fully_accelerated") && r.meta["is_fully_accelerated"].is_boolean())
    r.is_fully_accelerated = r.meta["is_fully_accelerated"].get<bool>();
  r.compile_ms = NumberOr(r.meta, "compile_ms", 0);
  r.run_ms = NumberOr(r.meta, "run_ms", 0);
  r.run_ms_first = NumberOr(r.meta, "run_ms_first", 0);
  if (!request.residency_only) {
    for (const auto& o : r.meta.value("outputs", nlohmann::json::array())) {
      const std::string file = o.value("file", std::string());
      try {
        r.outputs.push_back(npy::Read((fs::path(request.out_dir) / file).string()));
      } catch (const Error& e) {
        r.error = std::string(RuntimeName(request.runtime)) + ": " + e.what();
        return r;
      }
    }
  }
  if (litert) {
    if (r.meta.contains("residency")) r.meta["harness_residency"] = r.meta["residency"];
    r.meta["residency"] = ToJson(r.residency);
  }
  r.meta["runtime_id"] = RuntimeName(request.runtime);
  r.meta["harness_ms"] = harness_ms;
  WriteFileAtomically(meta_path.string(), r.meta.dump(2) + "\n");
  r.ok = true;
  return r;
}

[[noreturn]] void ThrowHarnessFailure(const std::string& harness, const ProcessResult& p) {
  if (p.timed_out) throw Error(ErrorKind::kIo, harness + " timed out (GPUCLEAN_PROBE_TIMEOUT_S)");
  const std::string line = FirstLine(p.err);
  if (line.find("not installed") != std::string::npos || line.find("not found") != std::string::npos ||
      line.find("cannot launch") != std::string::npos || line.find("no WebGPU adapter") != std::string::npos)
    ThrowUnsupported(line);
  ThrowBadInput(line.empty() ? harness + " exited with status " + std::to_string(p.exit_code) : line);
}

}  // namespace gpuclean::probe::internal
