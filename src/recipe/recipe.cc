// `gpuclean recipe`: the files, the references, the runner and a README whose
// tables come from runs made here - never from a template's numbers.
#include "gpuclean/recipe.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gpuclean/error.h"
#include "gpuclean/format.h"
#include "gpuclean/io.h"
#include "gpuclean/npy.h"
#include "gpuclean/pipeline.h"
#include "gpuclean/probe.h"
#include "gpuclean/record.h"
#include "gpuclean/rewrite.h"

namespace gpuclean::recipe {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

std::string FileSafe(const std::string& name) {
  std::string out;
  for (char c : name)
    out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.') ? c : '_';
  return out;
}

void Progress(const Options& o, const std::string& line) {
  if (o.progress) o.progress(line);
}

std::string ShapeText(const std::vector<int64_t>& shape) { return fmt::format("[{}]", fmt::join(shape, ",")); }

std::string SizeText(uintmax_t bytes) {
  if (bytes >= (uintmax_t{1} << 20)) return fmt::format("{:.1f} MB", static_cast<double>(bytes) / (1 << 20));
  if (bytes >= 1024) return fmt::format("{:.1f} KB", static_cast<double>(bytes) / 1024);
  return fmt::format("{} B", bytes);
}

void Copy(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::create_directories(to.parent_path(), ec);
  fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
  if (ec)
    throw Error(ErrorKind::kIo, fmt::format("cannot copy {} to {}: {}", from.string(), to.string(), ec.message()));
}

// A .tflite as a one-stage pipeline: its inputs with a MODEL.<input>.npy
// beside it are constants the host feeds, the rest are the app's inputs.
pipeline::Spec SingleGraphSpec(const std::string& model_path, const fs::path& dir) {
  const ir::Model model = format::ReadModel(model_path);
  const ir::Subgraph& g = model.main();
  pipeline::Spec spec;
  spec.source = model_path;
  pipeline::Stage stage;
  stage.name = "graph1";
  stage.graph = fs::path(model_path).filename().string();
  stage.placement = "gpu";
  stage.ops = static_cast<int>(g.ops.size());
  for (int32_t t : g.inputs) {
    const std::string& name = g.tensors[t].name;
    stage.inputs.push_back(name);
    const std::string constant = rewrite::HostInputPath(model_path, name);
    if (fs::exists(constant)) {
      const std::string file = fs::path(constant).filename().string();
      spec.constants.push_back({name, file});
      Copy(constant, dir / file);
    } else {
      spec.inputs.push_back(name);
    }
  }
  for (int32_t t : g.outputs) {
    stage.outputs.push_back(g.tensors[t].name);
    spec.outputs.push_back(g.tensors[t].name);
  }
  ir::Model named = model;
  named.NameSignature(stage.inputs, stage.outputs);
  format::WriteModel(named, (dir / stage.graph).string());
  spec.stages.push_back(std::move(stage));
  return spec;
}

// A pipeline's files copied beside its spec in `dir`.
pipeline::Spec CopiedSpec(const std::string& spec_path, const fs::path& dir) {
  pipeline::Spec spec = pipeline::LoadSpec(spec_path);
  const fs::path from = fs::path(spec_path).parent_path();
  for (size_t s = 0; s < spec.stages.size(); ++s) {
    pipeline::Stage& stage = spec.stages[s];
    if (stage.kind != pipeline::Stage::Kind::kGraph) continue;
    const std::string file = fs::path(stage.graph).filename().string();
    // Graphs from older writers may lack the signature run.mjs binds by.
    ir::Model model = *spec.models[s];
    if (model.signatures.empty()) model.NameSignature(stage.inputs, stage.outputs);
    format::WriteModel(model, (dir / file).string());
    stage.graph = file;
  }
  for (pipeline::Constant& c : spec.constants) {
    const std::string file = fs::path(c.file).filename().string();
    Copy(fs::path(c.file).is_absolute() ? fs::path(c.file) : from / c.file, dir / file);
    c.file = file;
  }
  if (!spec.source.empty() && fs::path(spec.source).is_relative() && fs::exists(from / spec.source))
    spec.source = (from / spec.source).string();
  return spec;
}

std::string PackageVersion(const std::string& package) {
  try {
    const probe::ProbeEnvironment env = probe::FindProbeEnvironment(false);
    const fs::path file = fs::path(env.source_dir) / "node_modules" / package / "package.json";
    if (!fs::exists(file)) return "not installed";
    std::ifstream in(file);
    const Json j = Json::parse(in, nullptr, false);
    return j.is_object() && j.contains("version") && j["version"].is_string() ? j["version"].get<std::string>()
                                                                              : std::string("?");
  } catch (const Error&) {
    return "not installed";
  }
}

struct Check {
  std::string label;  // "fp32 (gpuclean's interpreter)", ...
  pipeline::ProveReport report;
};

std::string GatesCell(const pipeline::OutputVerdict& v) {
  std::vector<std::string> parts;
  for (const analyze::GateResult& g : v.gates)
    parts.push_back(fmt::format("{} {}: {}", g.passed ? "pass" : "FAIL", g.gate, g.detail));
  return parts.empty() ? std::string("no gate") : fmt::format("{}", fmt::join(parts, "; "));
}

std::string Escape(std::string cell) {
  std::string out;
  for (char c : cell) out += c == '|' ? std::string("\\|") : c == '\n' ? std::string(" ") : std::string(1, c);
  return out;
}

std::string KotlinSnippet(const pipeline::Spec& spec) {
  std::string s =
      "```kotlin\n"
      "val env = Environment.create()  // one Environment shared by every stage\n";
  int n = 0;
  for (const pipeline::Stage& st : spec.stages) {
    if (st.kind != pipeline::Stage::Kind::kGraph) continue;
    ++n;
    s += fmt::format("val stage{} = CompiledModel.create(\"{}\", CompiledModel.Options(Accelerator.{}), env)\n", n,
                     st.graph, st.placement == "cpu" ? "CPU" : "GPU");
  }
  n = 0;
  for (const pipeline::Stage& st : spec.stages) {
    if (st.kind != pipeline::Stage::Kind::kGraph) continue;
    ++n;
    s += fmt::format("// {}: buffers by name (signature \"{}\"), never by slot order\n", st.name,
                     ir::kDefaultSignatureKey);
    s += fmt::format("val in{} = mapOf(", n);
    for (size_t k = 0; k < st.inputs.size(); ++k)
      s += fmt::format("{}\n  \"{}\" to stage{}.createInputBuffer(\"{}\", \"{}\")", k ? "," : "", st.inputs[k], n,
                       st.inputs[k], ir::kDefaultSignatureKey);
    s += ")\n";
    s += fmt::format("val out{} = mapOf(", n);
    for (size_t k = 0; k < st.outputs.size(); ++k)
      s += fmt::format("{}\n  \"{}\" to stage{}.createOutputBuffer(\"{}\", \"{}\")", k ? "," : "", st.outputs[k], n,
                       st.outputs[k], ir::kDefaultSignatureKey);
    s += ")\n";
  }
  s += "// write each constant once (its .npy holds the values) and each input per frame:\n";
  for (const pipeline::Constant& c : spec.constants)
    s += fmt::format("//   \"{}\" <- {} (writeFloat once)\n", c.name, c.file);
  n = 0;
  for (const pipeline::Stage& st : spec.stages) {
    if (st.kind != pipeline::Stage::Kind::kGraph) continue;
    ++n;
    s += fmt::format("stage{}.run(in{}, out{}, \"{}\")  // then copy what the next stage reads\n", n, n, n,
                     ir::kDefaultSignatureKey);
  }
  s += "```\n";
  return s;
}

}  // namespace

Result WriteRecipe(const Options& o) {
  if (o.source.empty()) throw Error(ErrorKind::kUsage, "recipe needs a model: a PREFIX.pipeline.json or a .tflite");
  if (o.out_dir.empty()) throw Error(ErrorKind::kUsage, "recipe needs -o DIR");
  if (!fs::exists(o.source)) throw Error(ErrorKind::kBadInput, fmt::format("{}: no such file", o.source));
  if (fs::exists(o.out_dir) && !(fs::is_directory(o.out_dir) && fs::is_empty(o.out_dir)))
    throw Error(ErrorKind::kUsage,
                fmt::format("{} exists and is not empty; a recipe is written to a new folder", o.out_dir));
  if (o.seeded_sets < 0 || o.seeded_sets > 16) throw Error(ErrorKind::kUsage, "--seeds expects 0 to 16 seeded sets");
  const fs::path final_dir = fs::absolute(o.out_dir).lexically_normal();
  const fs::path building = final_dir.parent_path() / (final_dir.filename().string() + ".partial");
  fs::remove_all(building);
  fs::create_directories(building);
  Result result;
  result.out_dir = final_dir.string();
  try {
    // The stages, copied.
    const bool is_pipeline = o.source.ends_with(".json");
    pipeline::Spec spec = is_pipeline ? CopiedSpec(o.source, building) : SingleGraphSpec(o.source, building);
    spec.proof = Json();
    const std::string spec_path = (building / "pipeline.json").string();
    pipeline::WriteSpec(spec, spec_path);
    spec = pipeline::LoadSpec(spec_path);
    pipeline::WriteSpec(spec, spec_path);  // again, with each graph's tensors described

    std::string against = o.against;
    if (against.empty() && !spec.source.empty() && fs::exists(spec.source) &&
        (spec.source.ends_with(".onnx") || (is_pipeline && spec.source.ends_with(".tflite"))))
      against = spec.source;
    const std::vector<std::string> targets = lint::SplitTargets(o.target);
    const std::string compat = (fs::path(lint::DefaultDataDir()) / "compat").string();

    // The input sets: the realistic one (when given), then seeded ones.
    struct InputSet {
      std::string label;
      std::map<std::string, npy::Array> values;
      uint32_t seed = 0;
    };
    std::vector<InputSet> sets;
    if (!o.inputs.empty()) {
      InputSet real;
      real.label = "realistic input";
      for (const auto& [name, file] : o.inputs) {
        if (std::find(spec.inputs.begin(), spec.inputs.end(), name) == spec.inputs.end())
          throw Error(ErrorKind::kUsage, fmt::format("--input {}: the model has no input '{}' (inputs: {})", name, name,
                                                     fmt::join(spec.inputs, ", ")));
        real.values[name] = npy::Read(file);
      }
      real.seed = 1;
      sets.push_back(std::move(real));
    }
    for (int k = 0; k < o.seeded_sets; ++k)
      sets.push_back({fmt::format("seeded input (seed {})", k + 1), {}, static_cast<uint32_t>(k + 1)});
    if (sets.empty()) throw Error(ErrorKind::kUsage, "a recipe needs at least one input set (--input or --seeds)");

    // References and fidelity: every set in fp32 on our interpreter against
    // the reference model; the first set also in each target's arithmetic
    // and, with measure, on LiteRT.js.
    const ScratchDir work("gpuclean-recipe");
    std::vector<Check> checks;
    Json refs = Json::array();
    for (size_t s = 0; s < sets.size(); ++s) {
      pipeline::ProveOptions prove;
      prove.run.work_dir = work / fmt::format("set{}", s + 1);
      prove.run.seed = sets[s].seed;
      prove.input_values = sets[s].values;
      prove.gates = o.gates;
      prove.gate_options = o.gate_options;
      const fs::path set_dir = building / "refs" / fmt::format("set{}", s + 1);
      fs::create_directories(set_dir);
      Progress(o, fmt::format("set {} ({}): fp32 against {}", s + 1, sets[s].label,
                              against.empty() ? std::string("the recipe's own stages") : against));
      pipeline::ProveReport fp32;
      if (!against.empty()) {
        fp32 = pipeline::Prove(spec, against, prove);
      } else {
        fp32.chain =
            pipeline::Run(spec, pipeline::PrepareInputArrays(spec, prove.input_values, prove.run.seed), prove.run);
        fp32.passed = true;
      }
      for (size_t i = 0; i < spec.inputs.size(); ++i)
        npy::Write((set_dir / ("in." + FileSafe(spec.inputs[i]) + ".npy")).string(), fp32.chain.inputs[i]);
      for (size_t p = 0; p < spec.outputs.size(); ++p) {
        const npy::Array& value =
            against.empty() ? fp32.chain.outputs[p] : fp32.reference.at(fp32.outputs.at(p).reference_index);
        npy::Write((set_dir / ("out." + FileSafe(spec.outputs[p]) + ".npy")).string(), value);
      }
      refs.push_back({{"set", s + 1}, {"label", sets[s].label}, {"dir", fmt::format("refs/set{}", s + 1)}});
      if (against.empty()) continue;
      checks.push_back({fmt::format("set {} ({}), fp32, gpuclean's interpreter", s + 1, sets[s].label), fp32});
      if (s != 0) continue;
      for (const std::string& t : targets) {
        const exec::Precision precision = lint::NumericModel(lint::LoadMatrix(compat, t));
        if (precision == exec::Precision::kFp32) continue;
        pipeline::ProveOptions in_target = prove;
        in_target.run.precision = precision;
        Progress(o, fmt::format("set 1: GPU stages in {}'s arithmetic ({})", t, exec::PrecisionName(precision)));
        checks.push_back({fmt::format("set 1, {} GPU stages ({}'s arithmetic, emulated), fp32 CPU stages",
                                      exec::PrecisionName(precision), t),
                          pipeline::Prove(spec, against, in_target)});
      }
      if (o.measure) {
        pipeline::ProveOptions litert = prove;
        litert.run.runtime = Runtime::kLiteRtWebGpu;
        litert.run.precision = exec::Precision::kFp16Fused;
        Progress(o, "set 1: measuring on LiteRT.js (WebGPU fp16 GPU stages, wasm CPU stages, one page)");
        checks.push_back({"set 1, measured: LiteRT.js WebGPU fp16 GPU stages, wasm CPU stages (headless Chromium)",
                          pipeline::Prove(spec, against, litert)});
      }
    }

    // The README.
    const std::string title = o.title.empty() ? fs::path(o.source).stem().stem().string() : o.title;
    std::string md = fmt::format("# {}\n\n", title);
    int gpu_stages = 0, cpu_stages = 0, host_stages = 0;
    for (const pipeline::Stage& st : spec.stages) {
      if (st.kind == pipeline::Stage::Kind::kHost)
        ++host_stages;
      else
        (st.placement == "cpu" ? cpu_stages : gpu_stages)++;
    }
    md += fmt::format(
        "A LiteRT model recipe written by `gpuclean recipe` from `{}`: {} GPU graph(s), {} CPU graph(s){}, run in "
        "the order of `pipeline.json`. Every graph carries one signature, `{}`, whose input and output names are "
        "the ones below: bind buffers by name.\n\n",
        fs::path(o.source).filename().string(), gpu_stages, cpu_stages,
        host_stages ? fmt::format(", {} host step(s)", host_stages) : std::string(), ir::kDefaultSignatureKey);

    md += "## Files\n\n| file | what | size |\n|---|---|---|\n";
    for (size_t s = 0; s < spec.stages.size(); ++s) {
      const pipeline::Stage& st = spec.stages[s];
      if (st.kind != pipeline::Stage::Kind::kGraph) continue;
      md += fmt::format("| `{}` | stage `{}`: {} ops, placement {} | {} |\n", st.graph, st.name, st.ops, st.placement,
                        SizeText(fs::file_size(building / st.graph)));
    }
    for (const pipeline::Constant& c : spec.constants)
      md += fmt::format("| `{}` | constant `{}`, fed by the app once | {} |\n", c.file, c.name,
                        SizeText(fs::file_size(building / c.file)));
    md +=
        "| `pipeline.json` | the stages, their inputs and outputs by name | |\n"
        "| `refs/set<k>/` | reference inputs (`in.*.npy`) and the reference model's outputs (`out.*.npy`) | |\n"
        "| `run.mjs` | runs every stage with LiteRT.js, binding by name (`node run.mjs --set 1 --out out/`) | |\n\n";

    md += "## Inputs\n\n| name | dtype | shape | fed by | values in set 1 |\n|---|---|---|---|---|\n";
    for (size_t i = 0; i < spec.inputs.size(); ++i) {
      npy::Array value = npy::Read((building / "refs/set1" / ("in." + FileSafe(spec.inputs[i]) + ".npy")).string());
      std::string range = "-";
      if (value.dtype == tfl::TensorType_FLOAT32 && !value.data.empty()) {
        const auto* f = reinterpret_cast<const float*>(value.data.data());
        const auto [lo, hi] = std::minmax_element(f, f + value.data.size() / 4);
        range = fmt::format("[{:.4g}, {:.4g}]", *lo, *hi);
      }
      md += fmt::format("| `{}` | {} | {} | the app ({}) | {} |\n", spec.inputs[i], ir::DTypeName(value.dtype),
                        ShapeText(value.shape), sets[0].label, range);
    }
    for (size_t c = 0; c < spec.constants.size(); ++c)
      md += fmt::format("| `{}` | {} | {} | constant: `{}` | - |\n", spec.constants[c].name,
                        ir::DTypeName(spec.constant_values[c].dtype), ShapeText(spec.constant_values[c].shape),
                        spec.constants[c].file);
    md += "\nThe values column is the range of the reference input: feed inputs preprocessed the same way.\n\n";

    md += "## Outputs\n\n| name | dtype | shape | judged by (the task gate) |\n|---|---|---|---|\n";
    for (size_t p = 0; p < spec.outputs.size(); ++p) {
      const npy::Array out =
          npy::Read((building / "refs/set1" / ("out." + FileSafe(spec.outputs[p]) + ".npy")).string());
      std::string gate = "-";
      if (!checks.empty() && p < checks.front().report.outputs.size()) {
        std::vector<std::string> names;
        for (const analyze::GateResult& g : checks.front().report.outputs[p].gates) names.push_back(g.gate);
        gate = fmt::format("{}", fmt::join(names, ", "));
      }
      md += fmt::format("| `{}` | {} | {} | {} |\n", spec.outputs[p], ir::DTypeName(out.dtype), ShapeText(out.shape),
                        gate);
    }

    md += "\n## Residency per stage\n\n| stage | placement |";
    for (const std::string& t : targets) md += fmt::format(" predicted for {} |", t);
    const Check* measured = nullptr;
    for (const Check& c : checks)
      if (c.report.runtime == RuntimeName(Runtime::kLiteRtWebGpu)) measured = &c;
    md += " measured (LiteRT.js) |\n|---|---|";
    for (size_t t = 0; t < targets.size(); ++t) md += "---|";
    md += "---|";
    md += "\n";
    Json residency = Json::array();
    for (size_t s = 0; s < spec.stages.size(); ++s) {
      const pipeline::Stage& st = spec.stages[s];
      if (st.kind != pipeline::Stage::Kind::kGraph) continue;
      md += fmt::format("| `{}` | {} |", st.name, st.placement);
      Json row = {{"stage", st.name}, {"placement", st.placement}};
      for (const std::string& t : targets) {
        std::string cell = "CPU path";
        if (st.placement == "gpu") {
          const lint::Report r = lint::Lint(*spec.models[s], lint::LoadMatrix(compat, t));
          cell = r.residency.empty() ? "-" : lint::PredictedLine(r.residency[0]);
          cell += fmt::format("; {} lint error(s)", r.count(lint::Severity::kError));
        }
        row["predicted"][t] = cell;
        md += fmt::format(" {} |", Escape(cell));
      }
      std::string cell = "not measured (`--measure`)";
      if (measured)
        for (const pipeline::StageRun& run : measured->report.chain.stages)
          if (run.name == st.name)
            cell = run.residency ? fmt::format("{}: {}", run.where, probe::Summarize(*run.residency)) : run.where;
      row["measured"] = cell;
      residency.push_back(row);
      md += fmt::format(" {} |\n", Escape(cell));
    }

    md += fmt::format("\n## Fidelity against `{}`\n\n",
                      against.empty() ? std::string("(no reference model: the refs are the recipe's own fp32 outputs)")
                                      : fs::path(against).filename().string());
    Json fidelity = Json::array();
    if (!checks.empty()) {
      md += "| run | output | verdict | gates |\n|---|---|---|---|\n";
      for (const Check& c : checks) {
        result.passed &= c.report.passed;
        Json entry = {{"run", c.label}, {"passed", c.report.passed}, {"outputs", Json::array()}};
        // A detector's outputs share one verdict: one row for them.
        std::vector<std::string> detector_outputs;
        for (const pipeline::OutputVerdict& v : c.report.outputs)
          if (c.report.detections && v.gates.size() == 1 && v.gates[0].gate == c.report.detections->gate)
            detector_outputs.push_back("`" + v.name + "`");
        if (!detector_outputs.empty())
          md += fmt::format("| {} | {} | {} | {} |\n", Escape(c.label), fmt::join(detector_outputs, ", "),
                            c.report.detections->passed ? "pass" : "FAIL",
                            Escape(c.report.detections->gate + ": " + c.report.detections->detail));
        for (const pipeline::OutputVerdict& v : c.report.outputs) {
          Json out = {{"name", v.name}, {"passed", v.passed}, {"gates", Json::array()}};
          for (const analyze::GateResult& g : v.gates) out["gates"].push_back(analyze::ToJson(g));
          entry["outputs"].push_back(out);
          if (std::find(detector_outputs.begin(), detector_outputs.end(), "`" + v.name + "`") != detector_outputs.end())
            continue;
          md += fmt::format("| {} | `{}` | {} | {} |\n", Escape(c.label), v.name, v.passed ? "pass" : "FAIL",
                            Escape(GatesCell(v)));
        }
        if (c.report.selection_swaps > 0)
          md += fmt::format("| {} | (all) | note | {} detection(s) selected by one run only |\n", Escape(c.label),
                            c.report.selection_swaps);
        fidelity.push_back(entry);
      }
    }

    md += "\n## How it was made\n\n```sh\n";
    for (const std::string& c : o.commands) md += c + "\n";
    md += "```\n\nVersions: gpuclean 0.1.0, @litertjs/core " + PackageVersion("@litertjs/core") +
          ", onnxruntime-node " + PackageVersion("onnxruntime-node") + ".\n\n";
    md +=
        "## Run it\n\nDesktop, LiteRT.js (Node; every stage on the wasm CPU accelerator):\n\n"
        "```sh\nnpm install @litertjs/core@" +
        PackageVersion("@litertjs/core") + " @litertjs/wasm-utils@" + PackageVersion("@litertjs/core") +
        "\nnode run.mjs --set 1 --out out/   # then compare out/ with refs/set1/out.*.npy\n```\n\n"
        "Android, the CompiledModel API (GPU stages on the GPU accelerator, CPU stages on the CPU):\n\n";
    md += KotlinSnippet(spec);
    md += "\n" + analyze::EmptyDeviceRecordsSection();
    WriteFileAtomically((building / "README.md").string(), md);
    WriteFileAtomically((building / "run.mjs").string(), RunnerScript());

    result.summary = {{"source", o.source},     {"against", against},   {"targets", targets},     {"refs", refs},
                      {"residency", residency}, {"fidelity", fidelity}, {"passed", result.passed}};
    for (const auto& entry : fs::recursive_directory_iterator(building))
      if (entry.is_regular_file()) result.files.push_back(fs::relative(entry.path(), building).string());
    std::sort(result.files.begin(), result.files.end());
  } catch (...) {
    fs::remove_all(building);
    throw;
  }
  if (fs::exists(final_dir)) fs::remove(final_dir);  // empty, checked above
  fs::rename(building, final_dir);
  return result;
}

}  // namespace gpuclean::recipe
