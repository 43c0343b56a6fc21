#include "gpuclean/run.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>

#include "gpuclean/error.h"
#include "gpuclean/format.h"
#include "gpuclean/io.h"
#include "gpuclean/limits.h"
#include "gpuclean/shapes.h"
#include "gpuclean/stopwatch.h"

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

namespace {

// `flag` names the option the key came from in the error.
int ResolveKey(const ir::Subgraph& g, const std::string& key, const char* flag) {
  if (!key.empty() && std::all_of(key.begin(), key.end(), ::isdigit)) {
    const int index = std::stoi(key);
    if (index < static_cast<int>(g.inputs.size())) return index;
    throw Error(ErrorKind::kUsage, fmt::format("{} {}: the model has {} inputs", flag, key, g.inputs.size()));
  }
  for (size_t i = 0; i < g.inputs.size(); ++i)
    if (g.tensors[g.inputs[i]].name == key) return static_cast<int>(i);
  throw Error(ErrorKind::kUsage, fmt::format("{} {}: no input has this name", flag, key));
}

}  // namespace

int ResolveInputKey(const ir::Subgraph& g, const std::string& key) { return ResolveKey(g, key, "--input"); }

std::vector<std::pair<int, npy::Array>> LoadImageInputs(const ir::Subgraph& g, const image::ImageInputs& images,
                                                        const std::vector<std::string>& npy_keys) {
  std::vector<bool> taken(g.inputs.size(), false);
  for (const std::string& key : npy_keys) taken[ResolveInputKey(g, key)] = true;
  // Named inputs first, so that a bare --image never takes an input another
  // --image names, whatever the order of the flags.
  std::vector<int> target(images.images.size(), -1);
  for (size_t k = 0; k < images.images.size(); ++k) {
    const image::ImageInput& image = images.images[k];
    if (image.key.empty()) continue;
    const int index = ResolveKey(g, image.key, "--image");
    if (taken[index])
      throw Error(ErrorKind::kUsage,
                  fmt::format("--image {}={}: input {} is already given by another --input or --image", image.key,
                              image.path, image.key));
    taken[index] = true;
    target[k] = index;
  }
  for (size_t k = 0; k < images.images.size(); ++k) {
    if (target[k] >= 0) continue;
    const bool some_taken = std::find(taken.begin(), taken.end(), true) != taken.end();
    for (size_t i = 0; i < g.inputs.size() && target[k] < 0; ++i)
      if (!taken[i] && image::LooksLikeImage(g.tensors[g.inputs[i]])) target[k] = static_cast<int>(i);
    if (target[k] < 0)
      throw Error(
          ErrorKind::kUsage,
          fmt::format("--image {}: no {}model input looks like an image (float32 [1,H,W,3] or [1,3,H,W], H and W "
                      ">= 16); name one with --image KEY=FILE",
                      images.images[k].path, some_taken ? "other " : ""));
    taken[target[k]] = true;
  }
  std::vector<std::pair<int, npy::Array>> out;
  for (size_t k = 0; k < images.images.size(); ++k)
    out.emplace_back(target[k],
                     image::LoadImageInput(images.images[k].path, g.tensors[g.inputs[target[k]]], images.options));
  return out;
}

void CheckTensorsFitMemory(const ir::Model& model) {
  if (model.subgraphs.empty()) return;
  const ir::Subgraph& g = model.main();
  // Saturating, and a negative (unresolved) dimension counts as empty: the
  // interpreter checks those once shapes are known.
  const auto bytes = [&](int32_t t) {
    uint64_t n = ir::DTypeSize(g.tensors[t].dtype);
    for (int32_t d : g.tensors[t].shape) {
      if (d < 0) return uint64_t{0};
      if (__builtin_mul_overflow(n, static_cast<uint64_t>(d), &n)) return UINT64_MAX;
    }
    return n;
  };
  for (size_t k = 0; k < g.inputs.size(); ++k) {
    const ir::Tensor& t = g.tensors[g.inputs[k]];
    CheckMemory(bytes(g.inputs[k]), fmt::format("input {} ('{}', {})", k, t.name, ir::FormatShape(t.shape)));
  }
  for (size_t i = 0; i < g.ops.size(); ++i)
    for (size_t k = 0; k < g.ops[i].outputs.size(); ++k) {
      const int32_t t = g.ops[i].outputs[k];
      if (t >= 0)
        CheckMemory(bytes(t), fmt::format("op {} ({}): output {} {}", i, g.ops[i].name(), k,
                                          ir::FormatShape(g.tensors[t].shape)));
    }
  // A lower bound of the interpreter's arena: whatever it plans, an op's
  // non-constant inputs and its outputs are there together.
  const auto add = [](uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; };
  uint64_t input_values = 0;
  for (int32_t t : g.inputs) input_values = add(input_values, bytes(t));
  for (size_t i = 0; i < g.ops.size(); ++i) {
    std::vector<int32_t> live;
    for (const auto* list : {&g.ops[i].inputs, &g.ops[i].outputs})
      for (int32_t t : *list)
        if (t >= 0 && !g.tensors[t].is_const() && std::find(live.begin(), live.end(), t) == live.end())
          live.push_back(t);
    uint64_t at_once = 0;
    for (int32_t t : live) at_once = add(at_once, bytes(t));
    CheckMemory(add(at_once, input_values),
                fmt::format("running the graph (op {} ({}) holds {} of tensors at once, beside {} of input values)", i,
                            g.ops[i].name(), FormatBytes(at_once), FormatBytes(input_values)));
  }
}

std::string HostInputPath(const std::string& model_path, const std::string& name) {
  fs::path stem(model_path);
  if (stem.extension() == ".tflite") stem.replace_extension();
  std::string safe = name;
  std::replace_if(
      safe.begin(), safe.end(), [](char c) { return c == '/' || c == ':' || c == ' '; }, '_');
  return stem.string() + "." + safe + ".npy";
}

std::optional<npy::Array> HostInputBeside(const std::string& model_path, const ir::Tensor& t) {
  if (model_path.empty()) return std::nullopt;
  const std::string path = HostInputPath(model_path, t.name);
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return std::nullopt;
  npy::Array a = npy::Read(path);
  if (a.dtype != t.dtype || a.shape != std::vector<int64_t>(t.shape.begin(), t.shape.end()))
    throw Error(
        ErrorKind::kUsage,
        fmt::format("{} (beside the model, for input '{}') holds {} [{}], the input is {} {}", path, t.name,
                    ir::DTypeName(a.dtype), fmt::join(a.shape, ","), ir::DTypeName(t.dtype), ir::FormatShape(t.shape)));
  return a;
}

std::vector<npy::Array> PrepareInputs(const ir::Subgraph& g,
                                      const std::vector<std::pair<std::string, std::string>>& given, uint32_t seed,
                                      const image::ImageInputs& images, const std::string& model_path) {
  std::vector<std::optional<npy::Array>> values(g.inputs.size());
  std::vector<std::string> npy_keys;
  for (const auto& [key, path] : given) {
    values[ResolveInputKey(g, key)] = npy::Read(path);
    npy_keys.push_back(key);
  }
  for (auto& [index, value] : LoadImageInputs(g, images, npy_keys)) values[index] = std::move(value);
  std::vector<npy::Array> out;
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const ir::Tensor& t = g.tensors[g.inputs[i]];
    if (!values[i]) values[i] = HostInputBeside(model_path, t);
    out.push_back(values[i] ? std::move(*values[i]) : GenerateInput(t, seed, static_cast<int>(i)));
  }
  return out;
}

std::vector<InputShape> ParseInputShapes(const std::vector<std::string>& specs) {
  std::vector<InputShape> out;
  for (const std::string& spec : specs) {
    const auto eq = spec.rfind('=');
    const auto bad = [&] {
      return Error(ErrorKind::kUsage, fmt::format("--input-shape expects KEY=d0,d1,... with positive dimensions, "
                                                  "got '{}'",
                                                  spec));
    };
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) throw bad();
    InputShape shape{spec.substr(0, eq), {}};
    std::stringstream dims(spec.substr(eq + 1));
    for (std::string d; std::getline(dims, d, ',');) {
      if (d.empty() || d.size() > 9 || !std::all_of(d.begin(), d.end(), ::isdigit)) throw bad();
      const int32_t v = std::stoi(d);
      if (v <= 0) throw bad();
      shape.dims.push_back(v);
    }
    out.push_back(std::move(shape));
  }
  return out;
}

ir::Model WithInputShapes(const ir::Model& model, const std::vector<InputShape>& shapes) {
  auto pinned = std::make_shared<ir::Model>(model);
  if (shapes.empty()) return *pinned;
  ir::Subgraph& g = pinned->subgraphs.at(0);
  for (const InputShape& s : shapes) {
    ir::Tensor& t = g.tensors[g.inputs[ResolveInputKey(g, s.key)]];
    if (s.dims.size() != t.shape.size())
      throw Error(ErrorKind::kUsage, fmt::format("--input-shape {}: input '{}' has rank {}, got {} dimensions", s.key,
                                                 t.name, t.shape.size(), s.dims.size()));
    int64_t elements = 1;
    for (size_t d = 0; d < s.dims.size(); ++d) {
      const bool dynamic = d < t.shape_signature.size() && t.shape_signature[d] < 0;
      if (!dynamic && s.dims[d] != t.shape[d])
        throw Error(ErrorKind::kUsage, fmt::format("--input-shape {}: dimension {} of input '{}' is fixed at {} "
                                                   "(shape_signature {}); only -1 dimensions can change",
                                                   s.key, d, t.name, t.shape[d], ir::FormatShape(t.shape_signature)));
      elements *= s.dims[d];
      if (elements > std::numeric_limits<int32_t>::max())
        throw Error(ErrorKind::kUsage, fmt::format("--input-shape {}: more than 2^31 elements", s.key));
    }
    t.shape = s.dims;
  }
  // Computed shapes follow from the inputs' (and from values of constant
  // subgraphs, which only the interpreter evaluates).
  std::vector<std::vector<int32_t>> inferred(g.tensors.size());
  {
    Interpreter interpreter(pinned);
    for (size_t t = 0; t < g.tensors.size(); ++t) inferred[t] = interpreter.tensor(static_cast<int>(t)).shape;
  }
  for (size_t t = 0; t < g.tensors.size(); ++t)
    if (!g.tensors[t].is_const()) g.tensors[t].shape = inferred[t];
  return *pinned;
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
  auto model =
      std::make_shared<const ir::Model>(WithInputShapes(format::ReadModel(request.model_path), request.input_shapes));
  Interpreter interpreter(model, {.threads = request.threads, .precision = request.precision});
  const ir::Subgraph& g = interpreter.graph();

  fs::create_directories(request.out_dir);
  std::vector<bool> given(g.inputs.size(), false);
  json meta;
  meta["model"] = request.model_path;
  meta["precision"] = PrecisionName(request.precision);
  meta["threads"] = request.threads;
  std::vector<std::string> npy_keys;
  for (const auto& [key, path] : request.inputs) {
    const int index = ResolveInputKey(g, key);
    interpreter.SetInput(index, npy::Read(path));
    given[index] = true;
    npy_keys.push_back(key);
  }
  // A photograph becomes in<i>.npy, as a generated input does: another
  // runtime (LiteRT.js, a phone) can then be fed the very same floats.
  std::vector<std::optional<json>> from_image(g.inputs.size());
  const std::vector<std::pair<int, npy::Array>> images = LoadImageInputs(g, request.images, npy_keys);
  for (size_t k = 0; k < images.size(); ++k) {
    const auto& [index, value] = images[k];
    const std::string file = fmt::format("in{}.npy", index);
    npy::Write(request.out_dir + "/" + file, value);
    interpreter.SetInput(index, value);
    from_image[index] = json{
        {"source", "image"},
        {"image", request.images.images[k].path},
        {"normalize", request.images.options.normalization.spec},
        {"layout", image::LayoutName(image::ResolveLayout(g.tensors[g.inputs[index]], request.images.options.layout))},
        {"file", file}};
  }
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const ir::Tensor& t = g.tensors[g.inputs[i]];
    json m = TensorMeta(t, interpreter.tensor(g.inputs[i]));
    if (from_image[i]) {
      m.update(*from_image[i]);
    } else if (given[i]) {
      m["source"] = "given";
    } else if (std::optional<npy::Array> beside = HostInputBeside(request.model_path, t)) {
      interpreter.SetInput(static_cast<int>(i), *beside);
      m["source"] = "beside the model";
      m["file"] = HostInputPath(request.model_path, t.name);
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
      dumped.push_back({{"tensor", tensor_index},
                        {"name", g.tensors[tensor_index].name},
                        {"op", op_index},
                        {"op_name", g.ops[op_index].name()},
                        {"file", file},
                        {"dtype", ir::DTypeName(value.dtype)},
                        {"shape", value.shape}});
    };
  }

  std::vector<double> times_ms;
  for (int r = 0; r < request.repeat; ++r) {
    const Stopwatch start;
    interpreter.Invoke(r == 0 ? tap : nullptr);
    times_ms.push_back(start.ms());
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
    WriteFileAtomically(request.dump_dir + "/index.json",
                        json{{"model", request.model_path}, {"tensors", dumped}}.dump(2));
  WriteFileAtomically(request.out_dir + "/meta.json", meta.dump(2));
  return meta;
}

}  // namespace gpuclean::exec
