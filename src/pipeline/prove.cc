// `pipeline prove`: the chain against the monolithic model it replaces, on
// the same inputs, judged by task gates output by output.
#include <filesystem>
#include <memory>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gpuclean/format.h"
#include "gpuclean/pipeline.h"
#include "gpuclean/task_gates.h"

namespace gpuclean::pipeline {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

bool EndsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// The monolith's outputs on the chain's inputs, and a graph that describes
// those outputs (names, dtypes, shapes) for gate inference.
struct Reference {
  std::vector<npy::Array> outputs;
  std::vector<std::string> names;
  ir::Subgraph outputs_graph;
};

// Which chain input feeds monolith input k: the one with the same name,
// else the one at the same position.
std::vector<int> MatchInputs(const Spec& spec, const std::vector<std::string>& names) {
  if (names.size() != spec.inputs.size())
    ThrowBadInput(fmt::format("the pipeline has {} inputs ({}) but the model it is proved against has {} ({})",
                              spec.inputs.size(), fmt::join(spec.inputs, ", "), names.size(), fmt::join(names, ", ")));
  std::vector<int> match;
  for (size_t k = 0; k < names.size(); ++k) {
    auto it = std::find(spec.inputs.begin(), spec.inputs.end(), names[k]);
    match.push_back(it != spec.inputs.end() ? static_cast<int>(it - spec.inputs.begin()) : static_cast<int>(k));
  }
  return match;
}

Reference RunTflite(const Spec& spec, std::shared_ptr<const ir::Model> model, const std::vector<npy::Array>& inputs,
                    int threads) {
  const ir::Subgraph& g = model->main();
  std::vector<std::string> in_names;
  for (int32_t t : g.inputs) in_names.push_back(g.tensors[t].name);
  const std::vector<int> match = MatchInputs(spec, in_names);
  exec::InterpreterOptions options;
  options.threads = threads;
  exec::Interpreter interpreter(model, options);
  for (size_t k = 0; k < match.size(); ++k) interpreter.SetInput(static_cast<int>(k), inputs[match[k]]);
  interpreter.Invoke();
  Reference ref;
  for (int o = 0; o < interpreter.num_outputs(); ++o) {
    ref.outputs.push_back(interpreter.Output(o));
    ref.names.push_back(g.tensors[g.outputs[o]].name);
  }
  ref.outputs_graph = g;
  return ref;
}

Reference RunOnnx(const Spec& spec, const std::string& path, const std::vector<npy::Array>& inputs,
                  const RunOptions& options) {
  const fs::path dir = fs::path(options.work_dir) / "reference";
  fs::create_directories(dir);
  probe::ProbeRequest request;
  request.model_path = path;
  request.runtime = probe::Runtime::kOnnxRuntime;
  request.threads = options.threads;
  request.out_dir = (dir / "out").string();
  // ONNX inputs are matched by position (a converted pipeline keeps them in
  // the model's order).
  for (size_t k = 0; k < inputs.size(); ++k) {
    const std::string file = (dir / fmt::format("in{}.npy", k)).string();
    npy::Write(file, inputs[k]);
    request.inputs.emplace_back(std::to_string(k), file);
  }
  probe::ProbeResult r = probe::RunProbe(request);
  Reference ref;
  ref.outputs = std::move(r.outputs);
  const Json& outs = r.meta.value("outputs", Json::array());
  for (size_t o = 0; o < ref.outputs.size(); ++o) {
    ref.names.push_back(o < outs.size() && outs[o].is_object() ? outs[o].value("name", fmt::format("out{}", o))
                                                               : fmt::format("out{}", o));
    ir::Tensor t;
    t.name = ref.names.back();
    t.dtype = ref.outputs[o].dtype;
    for (int64_t d : ref.outputs[o].shape) t.shape.push_back(static_cast<int32_t>(d));
    ref.outputs_graph.outputs.push_back(static_cast<int32_t>(ref.outputs_graph.tensors.size()));
    ref.outputs_graph.tensors.push_back(std::move(t));
  }
  return ref;
}

bool ReadsBoxes(const analyze::OutputGate& g) {
  return g.spec.kind == analyze::GateKind::kBoxIou ||
         (g.spec.kind == analyze::GateKind::kIou && g.options.boxes.has_value());
}

// The first box-gated output of shape [..., N>1, 4] decides the pairing of
// the chain's detections with the monolith's; every chain output whose
// shape starts with [..., N] is reordered by it.
void MatchDetections(const std::vector<analyze::OutputGate>& gates, std::vector<npy::Array>& ref_outputs,
                     const Spec& spec, const std::vector<int>& match, std::vector<npy::Array>& got,
                     ProveReport& report) {
  for (const analyze::OutputGate& g : gates) {
    const npy::Array boxes = ref_outputs[g.output];
    if (!ReadsBoxes(g) || !g.options.boxes || boxes.shape.size() < 2 || boxes.shape.back() != 4 ||
        boxes.shape[boxes.shape.size() - 2] < 2 || got[g.output].shape != boxes.shape)
      continue;
    const analyze::BoxMatching m = analyze::MatchBoxes(boxes, got[g.output], *g.options.boxes);
    const std::vector<int64_t> lead(boxes.shape.begin(), boxes.shape.end() - 1);
    for (size_t p = 0; p < match.size(); ++p) {
      if (match[p] < 0) continue;
      npy::Array& o = got[match[p]];
      if (o.shape.size() < lead.size() || !std::equal(lead.begin(), lead.end(), o.shape.begin())) continue;
      o = analyze::ApplyBoxMatching(o, m);
      report.matched_outputs.push_back(spec.outputs[p]);
      if (match[p] == g.output) report.matched_by = spec.outputs[p];
    }
    report.matched_moved = m.moved;
    report.selection_swaps = m.unpaired;
    // A few detections that one run selected and the other did not are
    // top-K near-ties, equally valid selections: the gates compare the
    // detections both runs hold. More than 2% is a failure of its own,
    // and then nothing is left out.
    const int64_t total = m.sets * m.per_set;
    const bool one_set = m.sets == 1 && std::all_of(lead.begin(), lead.end() - 1, [](int64_t d) { return d == 1; });
    if (m.unpaired == 0 || !one_set || m.unpaired > std::max<int64_t>(1, total / 50)) return;
    report.swaps_left_out = true;
    std::vector<int64_t> kept;
    for (size_t d = 0; d < m.paired.size(); ++d)
      if (m.paired[d]) kept.push_back(static_cast<int64_t>(d));
    for (size_t p = 0; p < match.size(); ++p) {
      const int r = match[p];
      if (r < 0) continue;
      if (std::find(report.matched_outputs.begin(), report.matched_outputs.end(), spec.outputs[p]) ==
          report.matched_outputs.end())
        continue;
      ref_outputs[r] = analyze::TakeRows(ref_outputs[r], lead.size() - 1, kept);
      got[r] = analyze::TakeRows(got[r], lead.size() - 1, kept);
    }
    return;
  }
}

}  // namespace

ProveReport Prove(const Spec& spec, const std::string& against, const ProveOptions& options) {
  if (!fs::exists(against)) ThrowBadInput(fmt::format("{}: no such file", against));
  const bool onnx = EndsWith(against, ".onnx");
  RunOptions run = options.run;
  ProveReport report;
  report.spec = spec.path;
  report.against = against;
  report.runtime = RuntimeName(run.runtime);
  // A .tflite monolith declares the inputs that only host steps read.
  std::shared_ptr<const ir::Model> monolith;
  if (!onnx) monolith = std::make_shared<const ir::Model>(format::ReadModel(against));
  const ir::Subgraph* declared = monolith ? &monolith->main() : nullptr;
  const std::vector<npy::Array> inputs = options.input_values.empty()
                                             ? PrepareInputs(spec, options.inputs, run.seed, declared)
                                             : PrepareInputArrays(spec, options.input_values, run.seed, declared);
  report.chain = Run(spec, inputs, run);
  Reference ref = onnx ? RunOnnx(spec, against, inputs, run) : RunTflite(spec, monolith, inputs, run.threads);
  report.reference = ref.outputs;

  // Pipeline output p <-> monolith output r: by name, else by position.
  std::vector<int> match;
  // Outputs that count a padded output's rows have no counterpart there:
  // the padded output, cut to them, is compared.
  std::set<std::string> counts;
  for (const PaddedOutput& p : spec.valid_rows) counts.insert(p.count);
  const size_t compared = spec.outputs.size() - counts.size();
  for (size_t p = 0; p < spec.outputs.size(); ++p) {
    auto it = std::find(ref.names.begin(), ref.names.end(), spec.outputs[p]);
    if (counts.count(spec.outputs[p]) && it == ref.names.end()) {
      match.push_back(-1);
    } else if (it != ref.names.end()) {
      match.push_back(static_cast<int>(it - ref.names.begin()));
    } else if (compared == ref.names.size()) {
      match.push_back(static_cast<int>(p));
    } else {
      throw Error(ErrorKind::kUsage, fmt::format("pipeline output '{}' has no output of that name in {} (outputs: {})",
                                                 spec.outputs[p], against, fmt::join(ref.names, ", ")));
    }
  }
  // The chain's values in the monolith's output order, for the gates.
  std::vector<npy::Array> got(ref.outputs.size());
  for (size_t p = 0; p < match.size(); ++p)
    if (match[p] >= 0) got[match[p]] = report.chain.outputs[p];
  const auto inferred = analyze::InferTaskGates(ref.outputs_graph, ref.outputs);
  std::vector<analyze::GateSpec> given = options.gates;
  for (analyze::GateSpec& g : given) {  // a gate may name a pipeline output
    auto it = std::find(spec.outputs.begin(), spec.outputs.end(), g.tensor);
    if (!g.tensor.empty() && it != spec.outputs.end() && match[it - spec.outputs.begin()] >= 0)
      g.tensor = ref.names[match[it - spec.outputs.begin()]];
  }
  const auto gates = analyze::ResolveTaskGates(ref.outputs_graph, given, options.gate_options, inferred);
  std::vector<npy::Array> gated_ref = ref.outputs;
  if (options.match_boxes) MatchDetections(gates, gated_ref, spec, match, got, report);
  const auto results = analyze::ApplyTaskGates(gates, gated_ref, got);
  // A detector's outputs: the detections found again decide them.
  std::vector<bool> judged_as_detections(ref.outputs.size(), false);
  if (options.detections && (options.gates.empty() || options.detections_given)) {
    std::vector<npy::Array> chain_in_ref_order(ref.outputs.size());
    for (size_t p = 0; p < match.size(); ++p)
      if (match[p] >= 0) chain_in_ref_order[match[p]] = report.chain.outputs[p];
    if (const auto layout = analyze::InferDetectionLayout(ref.outputs, options.gate_options)) {
      report.detections =
          analyze::DetectionsFoundAgain(*layout, ref.outputs, chain_in_ref_order, options.detection_gate);
      judged_as_detections[layout->scores] = judged_as_detections[layout->boxes] = true;
      if (layout->labels >= 0) judged_as_detections[layout->labels] = true;
      for (int m : layout->masks) judged_as_detections[m] = true;
    }
  }

  report.passed = true;
  for (size_t p = 0; p < match.size(); ++p) {
    if (match[p] < 0) continue;  // a count: its padded output is judged
    OutputVerdict v;
    v.name = spec.outputs[p];
    v.reference_name = ref.names[match[p]];
    v.reference_index = match[p];
    v.passed = true;
    if (judged_as_detections[match[p]]) {
      v.gates.push_back(*report.detections);
      v.passed = report.detections->passed;
    } else {
      for (const auto& r : results)
        if (r.gate.output == match[p]) {
          v.gates.push_back(r.result);
          v.passed &= r.result.passed;
        }
    }
    if (v.gates.empty()) v.passed = false;
    report.passed &= v.passed;
    report.outputs.push_back(std::move(v));
  }
  return report;
}

std::string RenderProve(const ProveReport& report) {
  std::string out =
      fmt::format("pipeline prove: {} against {} (runtime {})\n", report.spec, report.against, report.runtime);
  for (const StageRun& s : report.chain.stages) {
    out += fmt::format("  stage {:<16} {:<22} {:8.1f} ms", s.name, s.where, s.ms);
    if (s.residency) out += fmt::format(" (invoke {:.1f} ms)  {}", s.run_ms, probe::Summarize(*s.residency));
    out += "\n";
  }
  if (report.chain.browser_pages > 0)
    out += fmt::format("  WebGPU graphs ran in {} Chromium page(s) (one WebGPU device per page)\n",
                       report.chain.browser_pages);
  if (!report.matched_by.empty())
    out += fmt::format("  detections paired by box ({}): {} of the chain's moved; reordered alike: {}\n",
                       report.matched_by, report.matched_moved, fmt::join(report.matched_outputs, ", "));
  if (report.selection_swaps > 0)
    out += fmt::format(
        "  {} detection(s) selected by one run only (no box at IoU >= {} in the other: a different "
        "top-K selection){}\n",
        report.selection_swaps, analyze::kPairedIou,
        report.swaps_left_out ? "; the gates compare the detections both hold"
                              : "; more than 2% of the detections: gated as they are");
  if (report.detections)
    out += fmt::format("  detections {}: {}\n", report.detections->passed ? "pass" : "FAIL", report.detections->detail);
  for (const OutputVerdict& v : report.outputs) {
    out += fmt::format("  {} {}{}\n", v.passed ? "pass" : "FAIL", v.name,
                       v.reference_name == v.name ? "" : fmt::format(" (vs {})", v.reference_name));
    for (const analyze::GateResult& g : v.gates)
      out += fmt::format("       {} {}: {}\n", g.passed ? "ok  " : "FAIL", g.gate, g.detail);
    if (v.gates.empty()) out += "       no gate applies to this output\n";
  }
  out += report.passed
             ? fmt::format("verdict: PASS - the pipeline reproduces {} on every output gate\n", report.against)
             : fmt::format("verdict: FAIL - the pipeline does not reproduce {}\n", report.against);
  return out;
}

Json ToJson(const ProveReport& report) {
  Json j;
  j["spec"] = report.spec;
  j["against"] = report.against;
  j["runtime"] = report.runtime;
  j["passed"] = report.passed;
  j["stages"] = Json::array();
  for (const StageRun& s : report.chain.stages) j["stages"].push_back(ToJson(s));
  if (report.chain.browser_pages > 0) j["browser_pages"] = report.chain.browser_pages;
  if (!report.matched_by.empty())
    j["matched"] = {{"by", report.matched_by},
                    {"moved", report.matched_moved},
                    {"outputs", report.matched_outputs},
                    {"selection_swaps", report.selection_swaps},
                    {"swaps_left_out", report.swaps_left_out}};
  if (report.detections) j["detections"] = analyze::ToJson(*report.detections);
  j["outputs"] = Json::array();
  for (const OutputVerdict& v : report.outputs) {
    Json o = {{"name", v.name}, {"reference", v.reference_name}, {"passed", v.passed}, {"gates", Json::array()}};
    for (const analyze::GateResult& g : v.gates) o["gates"].push_back(analyze::ToJson(g));
    j["outputs"].push_back(std::move(o));
  }
  return j;
}

}  // namespace gpuclean::pipeline
