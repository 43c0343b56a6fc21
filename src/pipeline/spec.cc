// Pipeline specs: reading, checking and writing PREFIX.pipeline.json.
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gpuclean/format.h"
#include "gpuclean/host_steps.h"
#include "gpuclean/io.h"
#include "gpuclean/pipeline.h"
#include "pipeline/steps/step_util.h"

namespace gpuclean::pipeline {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

template <typename... Args>
[[noreturn]] void Bad(const std::string& path, fmt::format_string<Args...> format, Args&&... args) {
  ThrowBadInput(fmt::format("{}: {}", path, fmt::format(format, std::forward<Args>(args)...)));
}

std::string Resolve(const std::string& spec_path, const std::string& file) {
  const fs::path p(file);
  if (p.is_absolute()) return p.string();
  return (fs::path(spec_path).parent_path() / p).lexically_normal().string();
}

std::vector<std::string> Names(const std::string& path, const Json& j, const std::string& where) {
  if (!j.is_array()) Bad(path, "{} must be a list of value names", where);
  std::vector<std::string> out;
  for (const Json& e : j) {
    if (!e.is_string() || e.get<std::string>().empty())
      Bad(path, "{} must be a list of value names, got {}", where, e.dump());
    out.push_back(e.get<std::string>());
  }
  return out;
}

const Json& Field(const std::string& path, const Json& object, const char* name, const std::string& where) {
  auto it = object.find(name);
  if (it == object.end()) Bad(path, "{} has no \"{}\"", where, name);
  return *it;
}

std::string StringField(const std::string& path, const Json& object, const char* name, const std::string& where) {
  const Json& v = Field(path, object, name, where);
  if (!v.is_string() || v.get<std::string>().empty()) Bad(path, "{}'s \"{}\" must be a non-empty string", where, name);
  return v.get<std::string>();
}

ValueInfo InfoOf(const ir::Tensor& t) {
  ValueInfo info{t.dtype, {}};
  for (size_t i = 0; i < t.shape.size(); ++i)
    info.shape.push_back(i < t.shape_signature.size() && t.shape_signature[i] < 0 ? -1 : t.shape[i]);
  return info;
}

bool Fits(const ValueInfo& got, const ValueInfo& want) {
  if (got.dtype != want.dtype || got.shape.size() != want.shape.size()) return false;
  for (size_t i = 0; i < got.shape.size(); ++i)
    if (got.shape[i] != want.shape[i] && got.shape[i] >= 0 && want.shape[i] >= 0) return false;
  return true;
}

std::string InfoText(const ValueInfo& info) {
  return fmt::format("{} {}", ir::DTypeName(info.dtype), steps::ShapeText(info.shape));
}

Stage ParseStage(const std::string& path, const Json& j, size_t index) {
  const std::string where = fmt::format("stage {}", index + 1);
  if (!j.is_object()) Bad(path, "{} must be an object", where);
  Stage s;
  s.name = j.contains("name") ? StringField(path, j, "name", where) : fmt::format("stage{}", index + 1);
  const std::string named = fmt::format("stage '{}'", s.name);
  const bool graph = j.contains("graph"), host = j.contains("host");
  if (graph == host) Bad(path, "{} needs exactly one of \"graph\" (a model file) or \"host\" (a host step)", named);
  if (graph) {
    s.kind = Stage::Kind::kGraph;
    s.graph = StringField(path, j, "graph", named);
    if (j.contains("placement")) {
      s.placement = StringField(path, j, "placement", named);
      if (s.placement != "gpu" && s.placement != "cpu")
        Bad(path, "{}'s placement must be \"gpu\" or \"cpu\", got \"{}\"", named, s.placement);
    }
    if (j.contains("ops") && j["ops"].is_number_integer()) s.ops = j["ops"].get<int>();
  } else {
    s.kind = Stage::Kind::kHost;
    s.host = StringField(path, j, "host", named);
    s.params = j.value("params", Json::object());
    if (!s.params.is_object()) Bad(path, "{}'s params must be an object", named);
  }
  if (j.contains("inputs")) s.inputs = Names(path, j["inputs"], named + "'s inputs");
  if (j.contains("outputs")) s.outputs = Names(path, j["outputs"], named + "'s outputs");
  if (s.kind == Stage::Kind::kHost && (!j.contains("inputs") || !j.contains("outputs")))
    Bad(path, "{} (host step {}) must list its inputs and outputs", named, s.host);
  return s;
}

}  // namespace

Runtime ParseRuntime(const std::string& name) {
  // "litert": what an app runs - GPU stages on LiteRT.js's WebGPU delegate,
  // CPU stages on its wasm CPU path, in one page.
  if (name == "litert") return Runtime::kLiteRtWebGpu;
  return ::gpuclean::ParseRuntime(name, {Runtime::kOurs, Runtime::kLiteRtWasm, Runtime::kLiteRtWebGpu});
}

exec::Precision ParsePrecisionFor(Runtime runtime, const std::string& name) {
  if (runtime == Runtime::kLiteRtWebGpu && name == "fp16") return exec::Precision::kFp16Fused;
  return exec::ParsePrecision(name);
}

std::vector<int> RunOrder(const Spec& spec) {
  const size_t n = spec.stages.size();
  std::map<std::string, int> producer;
  for (size_t i = 0; i < n; ++i)
    for (const std::string& v : spec.stages[i].outputs) producer[v] = static_cast<int>(i);
  // Kahn's algorithm, always taking the earliest ready stage in file order.
  std::vector<std::vector<int>> consumers(n);
  std::vector<int> waiting(n, 0);
  for (size_t i = 0; i < n; ++i) {
    std::set<int> from;
    for (const std::string& v : spec.stages[i].inputs) {
      auto it = producer.find(v);
      if (it != producer.end()) from.insert(it->second);
    }
    for (int p : from) {
      consumers[p].push_back(static_cast<int>(i));
      ++waiting[i];
    }
  }
  std::set<int> ready;
  for (size_t i = 0; i < n; ++i)
    if (waiting[i] == 0) ready.insert(static_cast<int>(i));
  std::vector<int> order;
  while (!ready.empty()) {
    const int s = *ready.begin();
    ready.erase(ready.begin());
    order.push_back(s);
    for (int c : consumers[s])
      if (--waiting[c] == 0) ready.insert(c);
  }
  if (order.size() != n) {
    // Walk back from a stuck stage along stuck producers until one repeats.
    int s = 0;
    while (waiting[s] == 0) ++s;
    std::vector<int> trail;
    std::vector<int> seen(n, -1);
    while (seen[s] < 0) {
      seen[s] = static_cast<int>(trail.size());
      trail.push_back(s);
      for (const std::string& v : spec.stages[s].inputs) {
        auto it = producer.find(v);
        if (it != producer.end() && waiting[it->second] > 0) {
          s = it->second;
          break;
        }
      }
    }
    std::vector<std::string> names;
    for (size_t i = seen[s]; i < trail.size(); ++i) names.push_back(spec.stages[trail[i]].name);
    std::reverse(names.begin(), names.end());
    names.push_back(names.front());
    Bad(spec.path, "stages form a cycle: {}", fmt::join(names, " -> "));
  }
  return order;
}

Spec LoadSpec(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::kIo, fmt::format("cannot read pipeline spec {}", path));
  std::stringstream text;
  text << in.rdbuf();
  Json j;
  try {
    j = Json::parse(text.str());
  } catch (const Json::exception& e) {
    Bad(path, "not JSON ({})", std::string(e.what()).substr(0, 200));
  }
  if (!j.is_object()) Bad(path, "a pipeline spec is a JSON object");
  if (j.value("format", "") != kSpecFormat) Bad(path, "\"format\" must be \"{}\" (docs/pipeline.md)", kSpecFormat);
  if (!j.contains("version") || !j["version"].is_number_integer() || j["version"].get<int>() != kSpecVersion)
    Bad(path, "\"version\" must be {}", kSpecVersion);

  Spec spec;
  spec.path = path;
  spec.source = j.value("source", "");
  spec.proof = j.value("proof", Json());
  spec.inputs = Names(path, Field(path, j, "inputs", "the spec"), "inputs");
  spec.outputs = Names(path, Field(path, j, "outputs", "the spec"), "outputs");
  if (spec.outputs.empty()) Bad(path, "the pipeline has no outputs");
  if (j.contains("valid_rows")) {
    const Json& v = j["valid_rows"];
    const auto listed = [&](const std::string& name) {
      return std::find(spec.outputs.begin(), spec.outputs.end(), name) != spec.outputs.end();
    };
    if (!v.is_array()) Bad(path, "valid_rows must be a list of {{\"output\", \"axis\", \"count\"}}");
    for (const Json& p : v) {
      if (!p.is_object() || !p.contains("output") || !p.contains("count") || !p["output"].is_string() ||
          !p["count"].is_string() || !p.value("axis", Json(0)).is_number_integer())
        Bad(path, "valid_rows must be a list of {{\"output\", \"axis\", \"count\"}}");
      PaddedOutput padded{p["output"].get<std::string>(), p.value("axis", 0), p["count"].get<std::string>()};
      if (!listed(padded.output) || !listed(padded.count))
        Bad(path, "valid_rows names '{}' and '{}', which are not both pipeline outputs", padded.output, padded.count);
      spec.valid_rows.push_back(std::move(padded));
    }
  }
  if (j.contains("constants")) {
    if (!j["constants"].is_array()) Bad(path, "constants must be a list of {{\"name\", \"file\"}}");
    for (const Json& c : j["constants"]) {
      if (!c.is_object()) Bad(path, "constants must be a list of {{\"name\", \"file\"}}");
      Constant k{StringField(path, c, "name", "a constant"), ""};
      k.file = StringField(path, c, "file", fmt::format("constant '{}'", k.name));
      spec.constant_values.push_back(npy::Read(Resolve(path, k.file)));
      spec.constants.push_back(std::move(k));
    }
  }
  const Json& stages = Field(path, j, "stages", "the spec");
  if (!stages.is_array() || stages.empty()) Bad(path, "\"stages\" must be a non-empty list");
  if (stages.size() > 4096) Bad(path, "{} stages are more than a pipeline takes (4096)", stages.size());
  for (size_t i = 0; i < stages.size(); ++i) spec.stages.push_back(ParseStage(path, stages[i], i));

  // Load the graphs; default their wiring to the models' tensor names.
  std::set<std::string> stage_names;
  for (Stage& s : spec.stages) {
    if (!stage_names.insert(s.name).second) Bad(path, "two stages are named '{}'", s.name);
    if (s.kind == Stage::Kind::kHost) {
      spec.models.push_back(nullptr);
      const int want = HostStepOutputCount(s.host, s.params);
      if (static_cast<int>(s.outputs.size()) != want)
        Bad(path, "stage '{}' (host step {}) lists {} outputs; the step produces {}", s.name, s.host, s.outputs.size(),
            want);
      continue;
    }
    const std::string file = Resolve(path, s.graph);
    if (!fs::exists(file)) Bad(path, "stage '{}': graph file {} does not exist", s.name, file);
    auto model = std::make_shared<const ir::Model>(format::ReadModel(file));
    const ir::Subgraph& g = model->main();
    auto defaults = [&g](const std::vector<int32_t>& ids) {
      std::vector<std::string> names;
      for (int32_t t : ids) names.push_back(g.tensors[t].name);
      return names;
    };
    if (s.inputs.empty()) s.inputs = defaults(g.inputs);
    if (s.outputs.empty()) s.outputs = defaults(g.outputs);
    if (s.inputs.size() != g.inputs.size())
      Bad(path, "stage '{}' lists {} inputs; {} has {}", s.name, s.inputs.size(), s.graph, g.inputs.size());
    if (s.outputs.size() != g.outputs.size())
      Bad(path, "stage '{}' lists {} outputs; {} has {}", s.name, s.outputs.size(), s.graph, g.outputs.size());
    if (s.ops == 0) s.ops = static_cast<int>(g.ops.size());
    spec.models.push_back(std::move(model));
  }

  // Wiring: every value has one source and every use has a source.
  std::map<std::string, std::string> source;  // value -> what defines it
  auto define = [&](const std::string& v, const std::string& by) {
    auto [it, fresh] = source.emplace(v, by);
    if (!fresh) Bad(path, "value '{}' is defined twice: by {} and by {}", v, it->second, by);
  };
  for (const std::string& v : spec.inputs) define(v, "the pipeline inputs");
  for (const Constant& c : spec.constants) define(c.name, "constant " + c.file);
  for (const Stage& s : spec.stages)
    for (const std::string& v : s.outputs) define(v, fmt::format("stage '{}'", s.name));
  for (const Stage& s : spec.stages)
    for (const std::string& v : s.inputs)
      if (!source.count(v)) Bad(path, "stage '{}' reads '{}', which no input, constant or stage provides", s.name, v);
  for (const std::string& v : spec.outputs)
    if (!source.count(v)) Bad(path, "output '{}' is not provided by any input, constant or stage", v);

  // Dtypes and shapes wherever both sides are known before running.
  std::map<std::string, ValueInfo> known;
  for (size_t c = 0; c < spec.constants.size(); ++c)
    known[spec.constants[c].name] = {spec.constant_values[c].dtype, spec.constant_values[c].shape};
  for (int i : RunOrder(spec)) {
    const Stage& s = spec.stages[i];
    if (s.kind == Stage::Kind::kHost) continue;
    const ir::Subgraph& g = spec.models[i]->main();
    for (size_t k = 0; k < s.inputs.size(); ++k) {
      const ValueInfo want = InfoOf(g.tensors[g.inputs[k]]);
      auto it = known.find(s.inputs[k]);
      if (it == known.end()) {
        // A pipeline input takes the shape of the first graph it feeds.
        if (std::find(spec.inputs.begin(), spec.inputs.end(), s.inputs[k]) != spec.inputs.end())
          known[s.inputs[k]] = want;
        continue;
      }
      if (!Fits(it->second, want))
        Bad(path, "stage '{}' input {} ('{}') is {} but {} expects {}", s.name, k, s.inputs[k], InfoText(it->second),
            s.graph, InfoText(want));
    }
    for (size_t k = 0; k < s.outputs.size(); ++k) known[s.outputs[k]] = InfoOf(g.tensors[g.outputs[k]]);
  }
  return spec;
}

Json ToJson(const Spec& spec) {
  Json j;
  j["format"] = kSpecFormat;
  j["version"] = kSpecVersion;
  if (!spec.source.empty()) j["source"] = spec.source;
  j["inputs"] = spec.inputs;
  if (!spec.constants.empty()) {
    j["constants"] = Json::array();
    for (const Constant& c : spec.constants) j["constants"].push_back({{"name", c.name}, {"file", c.file}});
  }
  j["stages"] = Json::array();
  for (size_t index = 0; index < spec.stages.size(); ++index) {
    const Stage& s = spec.stages[index];
    Json st;
    st["name"] = s.name;
    if (s.kind == Stage::Kind::kGraph) {
      st["graph"] = s.graph;
      st["placement"] = s.placement;
      if (s.ops) st["ops"] = s.ops;
      // What an app binds, when the graph is at hand: each value's name in
      // the graph's signature, dtype and shape, and the file of a constant.
      if (index < spec.models.size() && spec.models[index]) {
        const ir::Model& model = *spec.models[index];
        const ir::Subgraph& g = model.main();
        if (!model.signatures.empty()) st["signature"] = model.signatures.front().key;
        auto describe = [&](const std::vector<int32_t>& tensors, const std::vector<std::string>& names) {
          Json list = Json::array();
          for (size_t k = 0; k < tensors.size() && k < names.size(); ++k) {
            const ir::Tensor& t = g.tensors[tensors[k]];
            Json v = {{"name", names[k]}, {"dtype", std::string(ir::DTypeName(t.dtype))}, {"shape", t.shape}};
            for (const Constant& c : spec.constants)
              if (c.name == names[k]) v["constant"] = c.file;
            list.push_back(std::move(v));
          }
          return list;
        };
        st["tensors"] = {{"inputs", describe(g.inputs, s.inputs)}, {"outputs", describe(g.outputs, s.outputs)}};
      }
    } else {
      st["host"] = s.host;
      st["params"] = s.params.is_null() ? Json::object() : s.params;
    }
    st["inputs"] = s.inputs;
    st["outputs"] = s.outputs;
    j["stages"].push_back(std::move(st));
  }
  j["outputs"] = spec.outputs;
  if (!spec.valid_rows.empty()) {
    j["valid_rows"] = Json::array();
    for (const PaddedOutput& p : spec.valid_rows)
      j["valid_rows"].push_back({{"output", p.output}, {"axis", p.axis}, {"count", p.count}});
  }
  if (!spec.proof.is_null()) j["proof"] = spec.proof;
  return j;
}

void WriteSpec(const Spec& spec, const std::string& path) {
  WriteFileAtomically(path, ToJson(spec).dump(2, ' ', false, Json::error_handler_t::replace) + "\n");
}

}  // namespace gpuclean::pipeline
