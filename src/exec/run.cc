#include "gpuclean/run.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>

#include "gpuclean/error.h"
#include "gpuclean/format.h"
#include "gpuclean/io.h"

namespace gpuclean::exec {
namespace fs = std::filesystem;
using nlohmann::json;

size_t PeakRssBytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  return 0;
}

npy::Array ToArray(const Tensor& t) {
  npy::Array a;
  a.dtype = t.dtype;
  a.shape.assign(t.shape.begin(), t.shape.end());
  a.data.assign(t.data, t.data + t.bytes);
  return a;
}

namespace {

std::string SanitisedName(const std::string& name) {
  std::string s;
  for (char c : name) s += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.') ? c : '_';
  if (s.size() > 80) s.resize(80);
  return s.empty() ? "tensor" : s;
}

}  // namespace

int ResolveInputKey(const ir::Subgraph& g, const std::string& key) {
  if (!key.empty() && std::all_of(key.begin(), key.end(), ::isdigit)) {
    const int index = std::stoi(key);
    if (index < static_cast<int>(g.inputs.size())) return index;
    throw Error(ErrorKind::kUsage, fmt::format("--input {}: the model has {} inputs", key, g.inputs.size()));
  }
  for (size_t i = 0; i < g.inputs.size(); ++i)
    if (g.tensors[g.inputs[i]].name == key) return static_cast<int>(i);
  throw Error(ErrorKind::kUsage, fmt::format("--input {}: no input has this name", key));
}

std::vector<npy::Array> PrepareInputs(const ir::Subgraph& g,
                                      const std::vector<std::pair<std::string, std::string>>& given, uint32_t seed) {
  std::vector<std::optional<npy::Array>> values(g.inputs.size());
  for (const auto& [key, path] : given) values[ResolveInputKey(g, key)] = npy::Read(path);
  std::vector<npy::Array> out;
  for (size_t i = 0; i < g.inputs.size(); ++i)
    out.push_back(values[i] ? std::move(*values[i]) : GenerateInput(g.tensors[g.inputs[i]], seed, static_cast<int>(i)));
  return out;
}

namespace {

json TensorMeta(const ir::Tensor& t, const Tensor& runtime) {
  return {{"name", t.name}, {"dtype", ir::DTypeName(runtime.dtype)}, {"shape", runtime.shape}};
}

}  // namespace

json RunToFolder(const RunRequest& request) {
  if (request.out_dir.empty()) throw Error(ErrorKind::kUsage, "--out DIR is required");
  if (request.threads < 1) throw Error(ErrorKind::kUsage, "--threads must be at least 1");
  if (request.repeat < 1) throw Error(ErrorKind::kUsage, "--repeat must be at least 1");
  auto model = std::make_shared<const ir::Model>(format::ReadModel(request.model_path));
  Interpreter interpreter(model, {.threads = request.threads, .precision = request.precision});
  const ir::Subgraph& g = interpreter.graph();

  fs::create_directories(request.out_dir);
  std::vector<bool> given(g.inputs.size(), false);
  json meta;
  meta["model"] = request.model_path;
  meta["precision"] = PrecisionName(request.precision);
  meta["threads"] = request.threads;
  for (const auto& [key, path] : request.inputs) {
    const int index = ResolveInputKey(g, key);
    interpreter.SetInput(index, npy::Read(path));
    given[index] = true;
  }
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const ir::Tensor& t = g.tensors[g.inputs[i]];
    json m = TensorMeta(t, interpreter.tensor(g.inputs[i]));
    if (given[i]) {
      m["source"] = "given";
    } else {
      npy::Array generated = GenerateInput(t, request.seed, static_cast<int>(i));
      npy::Write(fmt::format("{}/in{}.npy", request.out_dir, i), generated);
      interpreter.SetInput(static_cast<int>(i), generated);
      m["source"] = fmt::format("generated(seed={})", request.seed);
      m["file"] = fmt::format("in{}.npy", i);
    }
    meta["inputs"].push_back(m);
  }

  json dumped = json::array();
  TapFn tap;
  if (!request.dump_dir.empty()) {
    fs::create_directories(request.dump_dir);
    tap = [&](int op_index, int tensor_index, const Tensor& value) {
      const std::string file = fmt::format("{}_{}.npy", tensor_index, SanitisedName(g.tensors[tensor_index].name));
      npy::Write(request.dump_dir + "/" + file, ToArray(value));
      dumped.push_back({{"tensor", tensor_index}, {"name", g.tensors[tensor_index].name}, {"op", op_index},
                        {"op_name", g.ops[op_index].name()}, {"file", file}, {"dtype", ir::DTypeName(value.dtype)},
                        {"shape", value.shape}});
    };
  }

  std::vector<double> times_ms;
  for (int r = 0; r < request.repeat; ++r) {
    const auto start = std::chrono::steady_clock::now();
    interpreter.Invoke(r == 0 ? tap : nullptr);
    times_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  for (int i = 0; i < interpreter.num_outputs(); ++i) {
    npy::Write(fmt::format("{}/out{}.npy", request.out_dir, i), interpreter.Output(i));
    json m = TensorMeta(g.tensors[g.outputs[i]], interpreter.tensor(g.outputs[i]));
    m["file"] = fmt::format("out{}.npy", i);
    meta["outputs"].push_back(m);
  }
  if (!meta.contains("inputs")) meta["inputs"] = json::array();
  if (!meta.contains("outputs")) meta["outputs"] = json::array();
  meta["run_ms_first"] = times_ms.front();
  std::vector<double> warm(times_ms.begin() + (times_ms.size() > 1 ? 1 : 0), times_ms.end());
  std::sort(warm.begin(), warm.end());
  meta["run_ms"] = warm[warm.size() / 2];
  meta["run_ms_min"] = warm.front();
  meta["runs"] = request.repeat;
  meta["arena_bytes"] = interpreter.arena_bytes();
  meta["folded_const_bytes"] = interpreter.folded_const_bytes();
  meta["peak_rss_bytes"] = PeakRssBytes();
  if (!request.dump_dir.empty())
    WriteFileAtomically(request.dump_dir + "/index.json", json{{"model", request.model_path}, {"tensors", dumped}}.dump(2));
  WriteFileAtomically(request.out_dir + "/meta.json", meta.dump(2));
  return meta;
}

}  // namespace gpuclean::exec
