// Running a pipeline: stage by stage in dependency order, values passed by
// name, each graph on the chosen runtime, each host step in-process.
#include <chrono>
#include <filesystem>
#include <iostream>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gpuclean/host_steps.h"
#include "gpuclean/io.h"
#include "gpuclean/pipeline.h"
#include "gpuclean/stopwatch.h"
#include "pipeline/steps/step_util.h"

namespace gpuclean::pipeline {
namespace {

namespace fs = std::filesystem;

// The value fits graph input `k` of `stage` at the model's stored shape.
void RequireFits(const Spec& spec, const Stage& stage, const ir::Subgraph& g, size_t k, const npy::Array& value) {
  const ir::Tensor& t = g.tensors[g.inputs[k]];
  const std::vector<int64_t> want(t.shape.begin(), t.shape.end());
  if (value.dtype != t.dtype || value.shape != want)
    ThrowBadInput(fmt::format("{}: stage '{}' input {} ('{}') is {} {} but {} expects {} {}", spec.path, stage.name, k,
                              stage.inputs[k], ir::DTypeName(value.dtype), steps::ShapeText(value.shape), stage.graph,
                              ir::DTypeName(t.dtype), steps::ShapeText(want)));
}

std::vector<npy::Array> RunOurs(const Spec& spec, int index, const std::vector<npy::Array>& inputs,
                                const RunOptions& options) {
  const Stage& stage = spec.stages[index];
  exec::InterpreterOptions io;
  io.threads = options.threads;
  io.precision = stage.placement == "gpu" ? options.precision : exec::Precision::kFp32;
  exec::Interpreter interpreter(spec.models[index], io);
  for (size_t k = 0; k < inputs.size(); ++k) interpreter.SetInput(static_cast<int>(k), inputs[k]);
  interpreter.Invoke();
  std::vector<npy::Array> out;
  for (int o = 0; o < interpreter.num_outputs(); ++o) out.push_back(interpreter.Output(o));
  return out;
}

// With a session, the stage runs in its page: on the WebGPU delegate when
// `on_gpu`, else on the wasm CPU accelerator beside it.
probe::ProbeResult RunLiteRt(const Spec& spec, int index, const std::vector<npy::Array>& inputs,
                             const RunOptions& options, probe::WebGpuSession* session, bool on_gpu) {
  const Stage& stage = spec.stages[index];
  if (options.work_dir.empty()) ThrowInternal("pipeline: a LiteRT run needs a work folder");
  const fs::path dir = fs::path(options.work_dir) / fmt::format("stage{}-{}", index + 1, stage.name);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw Error(ErrorKind::kIo, fmt::format("cannot create {}: {}", dir.string(), ec.message()));
  probe::ProbeRequest request;
  request.model_path = fs::weakly_canonical(fs::path(spec.path).parent_path() / stage.graph).string();
  if (fs::path(stage.graph).is_absolute()) request.model_path = stage.graph;
  request.runtime = on_gpu ? probe::Runtime::kLiteRtWebGpu : probe::Runtime::kLiteRtWasm;
  request.precision = on_gpu && options.precision != exec::Precision::kFp32 ? "fp16" : "fp32";
  request.out_dir = (dir / "out").string();
  for (size_t k = 0; k < inputs.size(); ++k) {
    const std::string file = (dir / fmt::format("in{}.npy", k)).string();
    npy::Write(file, inputs[k]);
    request.inputs.emplace_back(std::to_string(k), file);
  }
  return session ? session->Run(request) : probe::RunProbe(request);
}

}  // namespace

std::vector<npy::Array> PrepareInputs(const Spec& spec, const std::map<std::string, std::string>& given, uint32_t seed,
                                      const ir::Subgraph* monolith) {
  std::map<std::string, npy::Array> arrays;
  for (const auto& [name, file] : given) {
    if (std::find(spec.inputs.begin(), spec.inputs.end(), name) == spec.inputs.end())
      throw Error(ErrorKind::kUsage, fmt::format("--input {}: the pipeline has no input '{}' (inputs: {})", name, name,
                                                 fmt::join(spec.inputs, ", ")));
    arrays[name] = npy::Read(file);
  }
  return PrepareInputArrays(spec, std::move(arrays), seed, monolith);
}

std::vector<npy::Array> PrepareInputArrays(const Spec& spec, std::map<std::string, npy::Array> given, uint32_t seed,
                                           const ir::Subgraph* monolith) {
  for (const auto& [name, value] : given)
    if (std::find(spec.inputs.begin(), spec.inputs.end(), name) == spec.inputs.end())
      throw Error(ErrorKind::kUsage,
                  fmt::format("the pipeline has no input '{}' (inputs: {})", name, fmt::join(spec.inputs, ", ")));
  const std::vector<int> order = RunOrder(spec);
  std::vector<npy::Array> out;
  for (size_t i = 0; i < spec.inputs.size(); ++i) {
    const std::string& name = spec.inputs[i];
    if (auto it = given.find(name); it != given.end()) {
      out.push_back(std::move(it->second));
      continue;
    }
    const ir::Tensor* feeds = nullptr;
    for (int s : order) {
      const Stage& stage = spec.stages[s];
      if (stage.kind != Stage::Kind::kGraph) continue;
      for (size_t k = 0; k < stage.inputs.size() && !feeds; ++k)
        if (stage.inputs[k] == name) feeds = &spec.models[s]->main().tensors[spec.models[s]->main().inputs[k]];
      if (feeds) break;
    }
    if (!feeds && monolith)
      for (int32_t t : monolith->inputs)
        if (monolith->tensors[t].name == name) feeds = &monolith->tensors[t];
    if (!feeds)
      throw Error(ErrorKind::kUsage, fmt::format("pipeline input '{}' feeds no graph, so it cannot be generated; "
                                                 "give it (--input {}=FILE.npy)",
                                                 name, name));
    out.push_back(exec::GenerateInput(*feeds, seed, static_cast<int>(i)));
  }
  return out;
}

nlohmann::json StagesJson(const RunResult& result) {
  nlohmann::json j = {{"stages", nlohmann::json::array()}};
  for (const StageRun& s : result.stages) j["stages"].push_back(ToJson(s));
  if (result.browser_pages > 0) j["browser_pages"] = result.browser_pages;
  return j;
}

nlohmann::json ToJson(const StageRun& stage) {
  nlohmann::json j = {{"name", stage.name}, {"where", stage.where}, {"ms", stage.ms}, {"run_ms", stage.run_ms}};
  if (stage.residency) j["residency"] = probe::ToJson(*stage.residency);
  return j;
}

RunResult Run(const Spec& spec, const std::vector<npy::Array>& inputs, const RunOptions& options) {
  if (inputs.size() != spec.inputs.size())
    ThrowInternal(fmt::format("pipeline: {} inputs given for {}", inputs.size(), spec.inputs.size()));
  RunResult result;
  result.inputs = inputs;
  for (size_t i = 0; i < inputs.size(); ++i) result.values[spec.inputs[i]] = inputs[i];
  for (size_t c = 0; c < spec.constants.size(); ++c) result.values[spec.constants[c].name] = spec.constant_values[c];

  // Every WebGPU graph of the run in one page and device, opened at the
  // first one.
  std::optional<probe::WebGpuSession> webgpu_session;
  for (int index : RunOrder(spec)) {
    const Stage& stage = spec.stages[index];
    std::vector<npy::Array> in;
    for (const std::string& v : stage.inputs) in.push_back(result.values.at(v));
    StageRun run{stage.name, "", 0, 0, std::nullopt};
    std::optional<double> runtime_ms;
    const Stopwatch start;
    std::vector<npy::Array> out;
    if (stage.kind == Stage::Kind::kHost) {
      run.where = "host " + stage.host;
      try {
        out = RunHostStep(stage.host, stage.params, in);
      } catch (const Error& e) {
        throw Error(e.kind(), fmt::format("{}: stage '{}': {}", spec.path, stage.name, e.what()));
      }
    } else {
      const ir::Subgraph& g = spec.models[index]->main();
      for (size_t k = 0; k < in.size(); ++k) RequireFits(spec, stage, g, k, in[k]);
      const bool on_gpu = stage.placement == "gpu";
      if (options.runtime == Runtime::kOurs) {
        const exec::Precision p = on_gpu ? options.precision : exec::Precision::kFp32;
        run.where = fmt::format("ours {}", exec::PrecisionName(p));
        out = RunOurs(spec, index, in, options);
      } else {
        // litert-webgpu: every graph in one page, GPU stages on the
        // delegate and CPU stages on wasm beside them.
        const bool in_page = options.runtime == Runtime::kLiteRtWebGpu;
        const bool webgpu = on_gpu && in_page;
        if (in_page && !webgpu_session) {
          webgpu_session.emplace();
          ++result.browser_pages;
        }
        probe::ProbeResult r = RunLiteRt(spec, index, in, options, in_page ? &*webgpu_session : nullptr, webgpu);
        run.where = webgpu ? "litert-webgpu" : in_page ? "litert-wasm (page)" : "litert-wasm";
        if (webgpu) run.residency = r.residency;
        runtime_ms = r.run_ms;
        out = std::move(r.outputs);
      }
      if (out.size() != stage.outputs.size())
        ThrowBadInput(fmt::format("{}: stage '{}' returned {} outputs, the spec lists {}", spec.path, stage.name,
                                  out.size(), stage.outputs.size()));
    }
    run.ms = start.ms();
    run.run_ms = runtime_ms.value_or(run.ms);
    if (options.progress)
      std::cerr << fmt::format("pipeline: stage '{}' ({}) {:.1f} ms\n", stage.name, run.where, run.ms);
    for (size_t k = 0; k < out.size(); ++k) result.values[stage.outputs[k]] = std::move(out[k]);
    result.stages.push_back(std::move(run));
  }
  for (const std::string& v : spec.outputs) result.outputs.push_back(result.values.at(v));
  for (const PaddedOutput& p : spec.valid_rows) {
    const auto at = [&](const std::string& name) {
      return std::find(spec.outputs.begin(), spec.outputs.end(), name) - spec.outputs.begin();
    };
    const npy::Array& count = result.outputs.at(at(p.count));
    if (count.num_elements() != 1 || count.dtype != tfl::TensorType_INT32)
      ThrowBadInput(fmt::format("pipeline output '{}' counts rows but is not one int32", p.count));
    npy::Array& padded = result.outputs.at(at(p.output));
    padded = FirstRows(padded, p.axis, count.as<int32_t>()[0]);
  }
  return result;
}

}  // namespace gpuclean::pipeline
