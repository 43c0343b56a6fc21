// convert --host-ops auto: convert with lint errors allowed, cut the ops the
// targets keep off the GPU into islands, clean each GPU graph for every
// target, write, and keep the spec only when the pipeline reproduces the
// ONNX model on onnxruntime in fp32 and in each target's GPU arithmetic.
#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gpuclean/convert_pipeline.h"
#include "gpuclean/error.h"
#include "gpuclean/exec.h"
#include "gpuclean/format.h"
#include "gpuclean/lint.h"
#include "gpuclean/rewrite.h"

namespace gpuclean::convert {
namespace {

namespace fs = std::filesystem;

std::string CompatDir(const Options& options) {
  return (fs::path(options.data_dir.empty() ? lint::DefaultDataDir() : options.data_dir) / "compat").string();
}

// The ONNX proof inputs by name, where the pipeline has an input of that name.
std::map<std::string, npy::Array> PipelineInputs(const Options& options, const pipeline::Spec& spec) {
  std::map<std::string, npy::Array> out;
  for (const auto& [name, value] : options.proof_inputs)
    if (std::find(spec.inputs.begin(), spec.inputs.end(), name) != spec.inputs.end()) out[name] = value;
  return out;
}

void PipelineProgress(const Options& options, const std::string& line) {
  if (options.progress) options.progress(line);
}

// Cuts `ops` into islands, cleans the GPU graphs for every target, writes
// the pipeline and proves it (fp32, then each target's arithmetic); the spec
// is kept only when every check passes.
void CutWriteProve(PipelineResult& result, const Options& options, const Options& given,
                   const PipelineOptions& pipeline_options, const std::vector<int>& ops, const std::string& prefix,
                   const std::string& stem, const std::vector<std::string>& targets) {
  PipelineProgress(options, fmt::format("cutting {} op(s) the GPU cannot take into islands ({})", ops.size(),
                                        split::IslandsName(pipeline_options.islands)));
  result.cut = split::CutHostIslands(result.conversion.model, ops, stem, pipeline_options.islands);
  split::HostCut& cut = result.cut;
  // Inputs the rewrites added for the host to feed are constants of the pipeline.
  for (const auto& [name, value] : result.conversion.host_inputs) {
    auto it = std::find(cut.spec.inputs.begin(), cut.spec.inputs.end(), name);
    if (it == cut.spec.inputs.end()) continue;
    cut.spec.inputs.erase(it);
    const std::string file = stem + ".const." + name + ".npy";
    cut.spec.constants.push_back({name, file});
    cut.constants.emplace_back(file, value);
  }
  // The cut's new graph outputs can break a GPU rule: each graph is linted
  // and fixed again, each target's clean-up in turn, then a second round
  // whose lint is the verdict.
  for (const std::string& t : targets) split::CleanGraphs(cut, t);
  // GPU graphs past a target's whole-graph compile ceiling are split there,
  // and the new graphs cleaned in turn (their new outputs can break a rule).
  std::optional<int> ceiling;
  for (const std::string& t : targets)
    if (const auto c = split::CompileCeiling(t)) ceiling = ceiling ? std::min(*ceiling, *c) : *c;
  result.ceiling_splits = ceiling ? split::SplitAtCompileCeiling(cut, *ceiling) : std::vector<std::string>{};
  if (!result.ceiling_splits.empty())
    for (const std::string& t : targets) split::CleanGraphs(cut, t);
  result.errors_left = 0;
  result.cleanup_text.clear();
  for (const std::string& t : targets) {
    const std::vector<split::GraphCleanup> cleanup = split::CleanGraphs(cut, t);
    result.errors_left += split::ErrorsLeft(cleanup);
    result.cleanup_text += split::DescribeCleanup(cleanup, t);
  }
  result.checks.clear();
  result.written = false;
  result.spec_path.clear();
  if (result.errors_left > 0 && !given.allow_remaining) return;

  const std::string spec_path = split::WriteHostCut(cut, prefix);
  pipeline::ProveOptions prove;
  prove.run.work_dir = prefix + ".prove";
  prove.gates = pipeline_options.gates;
  prove.gate_options = pipeline_options.gate_options;
  try {
    const pipeline::Spec spec = pipeline::LoadSpec(spec_path);
    prove.input_values = PipelineInputs(options, spec);
    PipelineProgress(options, "proving the pipeline against onnxruntime (fp32)");
    result.checks.push_back({"", "fp32", pipeline::Prove(spec, options.onnx_path, prove)});
    if (pipeline_options.fp16_check)
      for (const std::string& t : targets) {
        const exec::Precision precision = lint::NumericModel(lint::LoadMatrix(CompatDir(options), t));
        if (precision == exec::Precision::kFp32) continue;
        PipelineProgress(options,
                         fmt::format("proving the pipeline in {}'s arithmetic ({} GPU stages, fp32 CPU stages)", t,
                                     exec::PrecisionName(precision)));
        pipeline::ProveOptions in_target = prove;
        in_target.run.precision = precision;
        result.checks.push_back(
            {t, std::string(exec::PrecisionName(precision)), pipeline::Prove(spec, options.onnx_path, in_target)});
      }
  } catch (...) {
    fs::remove(spec_path);
    fs::remove_all(prove.run.work_dir);
    throw;
  }
  fs::remove_all(prove.run.work_dir);
  // As for one graph: --allow-remaining writes a pipeline proven in fp32
  // whose GPU arithmetic check failed; the exit code still says so.
  const bool fp32_proven = !result.checks.empty() && result.checks.front().report.passed;
  result.written = result.proven() || (given.allow_remaining && fp32_proven);
  if (result.written) {
    result.spec_path = spec_path;
    return;
  }
  // Nothing of a pipeline that did not pass stays behind.
  fs::remove(spec_path);
  const fs::path dir = fs::path(prefix).parent_path();
  for (const auto& [file, model] : cut.graphs) fs::remove(dir / file);
  for (const auto& [file, value] : cut.constants) fs::remove(dir / file);
}

}  // namespace

bool PipelineResult::proven() const {
  return !checks.empty() &&
         std::all_of(checks.begin(), checks.end(), [](const PipelineCheck& c) { return c.report.passed; });
}

int PipelineResult::exit_code() const {
  if (!cut_made) return conversion.exit_code();
  return written && proven() && errors_left == 0 ? 0 : 1;
}

PipelineResult ConvertToPipeline(const Options& given, const PipelineOptions& pipeline_options) {
  if (given.output_path.empty())
    throw Error(ErrorKind::kUsage, "--host-ops auto needs -o PREFIX (the pipeline's files are PREFIX.*)");
  const std::vector<std::string> targets = lint::SplitTargets(given.target);
  if (targets.empty() || given.target == "none")
    throw Error(ErrorKind::kUsage, "--host-ops auto needs a GPU --target (the ops it keeps off the GPU are cut)");
  if (given.nhwc_io)
    throw Error(ErrorKind::kUsage,
                "--host-ops auto keeps ONNX's layout at the pipeline's edges (the proof feeds onnxruntime the same "
                "arrays); drop --io-layout nhwc");
  const std::string prefix = given.output_path;
  Options options = given;
  options.output_path.clear();
  options.allow_remaining = true;

  PipelineResult result;
  result.target = given.target;
  result.conversion = Convert(options);
  if (!result.conversion.report.proven && result.conversion.report.proof_run) return result;

  // With several targets, an op goes to an island when any of them needs it
  // there, and every GPU graph is cleaned for each of them.
  std::vector<int> ops;
  for (const std::string& t : targets) {
    const std::vector<int> mine =
        split::HostOpsForTarget(result.conversion.model, t, pipeline_options.islands, &result.stays);
    ops.insert(ops.end(), mine.begin(), mine.end());
  }
  std::sort(ops.begin(), ops.end());
  ops.erase(std::unique(ops.begin(), ops.end()), ops.end());
  if (ops.empty()) {
    // Nothing needs to leave the GPU: the one graph is the result, written
    // as PREFIX.tflite when it passed, so exit 0 means a file to run.
    if (result.conversion.exit_code() == 0) {
      result.single_path = prefix + ".tflite";
      format::WriteModel(result.conversion.model, result.single_path);
      for (const auto& [name, value] : result.conversion.host_inputs)
        npy::Write(rewrite::HostInputPath(result.single_path, name), value);
    }
    return result;
  }
  result.cut_made = true;
  const std::string stem = fs::path(prefix).filename().string();
  CutWriteProve(result, options, given, pipeline_options, ops, prefix, stem, targets);
  // A selection whose scores the GPU computes can flip at near-ties in
  // half precision. When the target's arithmetic fails, measure the
  // placement that ranks in fp32: the score head joins the CPU graph.
  const bool fp16_failed = std::any_of(result.checks.begin(), result.checks.end(),
                                       [](const PipelineCheck& c) { return !c.target.empty() && !c.report.passed; });
  if (fp16_failed && pipeline_options.islands == split::Islands::kCpuGraphs && pipeline_options.exact_selections) {
    const ir::Subgraph& g = result.conversion.model.main();
    // Selections the GPU runs move too: the ranking is what must be exact.
    std::vector<int> more = ops;
    int selections_moved = 0;
    for (size_t i = 0; i < g.ops.size(); ++i) {
      const tfl::BuiltinOperator code = g.ops[i].code;
      const bool selection = code == tfl::BuiltinOperator_TOPK_V2 || code == tfl::BuiltinOperator_ARG_MAX ||
                             code == tfl::BuiltinOperator_ARG_MIN;
      if (selection && std::find(ops.begin(), ops.end(), static_cast<int>(i)) == ops.end() &&
          exec::RunsAsCpuGraphOp(g, static_cast<int>(i))) {
        more.push_back(static_cast<int>(i));
        ++selections_moved;
      }
    }
    const std::vector<int> island = split::GrowHostIslands(g, more, pipeline_options.islands);
    const std::vector<int> scores = split::SelectionScoreChains(g, island);
    if (!scores.empty() || selections_moved > 0) {
      PipelineProgress(options, fmt::format("the target's arithmetic failed: trying the selection{} and its score "
                                            "head ({} op(s)) in the CPU graph, ranked in fp32",
                                            selections_moved ? fmt::format(" ({} moved off the GPU)", selections_moved)
                                                             : std::string(),
                                            scores.size()));
      more.insert(more.end(), scores.begin(), scores.end());
      std::sort(more.begin(), more.end());
      PipelineResult exact;
      exact.conversion = result.conversion;
      exact.target = result.target;
      exact.cut_made = true;
      exact.stays = result.stays;
      CutWriteProve(exact, options, given, pipeline_options, more, prefix, stem, targets);
      const std::string first_try = fmt::format(
          "the selection's scores computed on the GPU: {}; the selection and its score head in the CPU graph "
          "({} op(s) moved): {}",
          result.proven() ? "passes" : "fails", scores.size() + selections_moved, exact.proven() ? "passes" : "fails");
      // The first placement failed, and its files are gone or overwritten:
      // the CPU placement is what stands on disk.
      exact.selection_note = first_try + " - kept the CPU placement";
      result = std::move(exact);
    }
  }
  return result;
}

std::string PipelineResult::RenderText() const {
  std::string out = conversion.report.RenderText();
  if (!cut_made) {
    if (conversion.report.proven || !conversion.report.proof_run)
      out += single_path.empty()
                 ? fmt::format("no op needs to leave the GPU for {}; nothing written\n", target)
                 : fmt::format("no op needs to leave the GPU for {}: wrote the one graph, {}\n", target, single_path);
    return out;
  }
  if (!conversion.report.target.numeric_model.empty())
    out +=
        "  (the monolith's arithmetic check above is superseded by the pipeline's below: the ops the GPU "
        "cannot take no longer run there)\n";
  for (const std::string& line : stays) out += "  stays on the GPU: " + line + "\n";
  out += fmt::format("pipeline for {}: {} between GPU graphs\n", target, split::HostStepSummary(cut));
  for (const std::string& line : ceiling_splits) out += "  " + line + "\n";
  out += split::DescribeHostCut(cut.spec) + cleanup_text;
  if (checks.empty()) {
    out += fmt::format(
        "not GPU-clean for {}: {} lint error(s) remain in the pipeline's GPU graphs; nothing written "
        "(--allow-remaining writes it anyway)\n",
        target, errors_left);
    return out;
  }
  if (!selection_note.empty()) out += "  selection: " + selection_note + "\n";
  for (const PipelineCheck& c : checks) {
    out += c.target.empty()
               ? std::string("fp32 (GPU and CPU stages in fp32):\n")
               : fmt::format("in {}'s arithmetic ({} GPU stages, fp32 CPU stages):\n", c.target, c.numeric_model);
    out += pipeline::RenderProve(c.report);
  }
  if (written)
    out += fmt::format("wrote {}{}{}\n", spec_path,
                       errors_left > 0 ? fmt::format(" ({} lint error(s) remain: --allow-remaining)", errors_left) : "",
                       proven() ? "" : " (a check above failed: --allow-remaining)");
  else
    out += "the pipeline spec was not written (a check above failed)\n";
  return out;
}

nlohmann::json PipelineResult::ToJson() const {
  nlohmann::json j = {{"convert", conversion.report.ToJson()}, {"pipeline_written", written}};
  if (!cut_made) {
    if (!single_path.empty()) j["written"] = single_path;
    return j;
  }
  j["pipeline"] = pipeline::ToJson(cut.spec);
  j["islands"] = split::IslandsName(cut.islands);
  j["graph_lint_errors_left"] = errors_left;
  j["stays"] = stays;
  nlohmann::json checks_json = nlohmann::json::array();
  for (const PipelineCheck& c : checks)
    checks_json.push_back({{"target", c.target.empty() ? nlohmann::json() : nlohmann::json(c.target)},
                           {"numeric_model", c.numeric_model},
                           {"proof", pipeline::ToJson(c.report)}});
  j["checks"] = std::move(checks_json);
  if (!selection_note.empty()) j["selection"] = selection_note;
  if (!ceiling_splits.empty()) j["ceiling_splits"] = ceiling_splits;
  // The fp32 proof, where the single-check report had it.
  if (!checks.empty()) j["proof"] = pipeline::ToJson(checks.front().report);
  if (written) j["spec"] = spec_path;
  return j;
}

}  // namespace gpuclean::convert
