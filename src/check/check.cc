#include "gpuclean/check.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>

#include "gpuclean/error.h"
#include "gpuclean/exec.h"
#include "gpuclean/format.h"
#include "gpuclean/rewrite.h"
#include "gpuclean/inspect.h"
#include "gpuclean/run.h"

namespace gpuclean::check {
namespace {

namespace fs = std::filesystem;

// Passes that cut the graph or move work to the host: the model cannot run
// whole on the GPU after any in-graph rewrite.
bool NeedsSplit(const std::string& pass) { return pass == "split-graph" || pass == "gather-to-host"; }

// Graph outputs "hold" in fp16-compute at this correlation and relative error.
constexpr double kOutputsHold = 0.999;
constexpr double kOutputDrift = 0.1;

bool Matters(const lint::Finding& f) { return f.severity != lint::Severity::kInfo; }

// A folder for the probe's files, removed when the check ends.
class ScratchDir {
 public:
  ScratchDir() {
    std::random_device rd;
    path_ = fs::temp_directory_path() / fmt::format("gpuclean-check-{:08x}", rd());
    fs::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  std::string str() const { return path_.string(); }

 private:
  fs::path path_;
};

MeasuredProbe ProbeWebGpu(const std::string& model_path, const std::shared_ptr<const ir::Model>& model,
                          const CheckOptions& options) {
  MeasuredProbe m;
  if (!options.probe) {
    m.skipped_because = "--no-probe";
    return m;
  }
  try {
    probe::FindProbeEnvironment(/*need_browser=*/true);
  } catch (const Error& e) {
    m.skipped_because = e.what();
    return m;
  }
  ScratchDir dir;
  probe::ProbeRequest request;
  request.model_path = model_path;
  request.runtime = probe::Runtime::kLiteRtWebGpu;
  request.precision = "fp16";
  request.seed = options.seed;
  request.out_dir = dir.str();
  m.result = probe::RunProbe(request);
  m.ran = true;
  if (!m.result.ok) return m;
  // Our fp32 outputs on the same generated inputs (the harness uses the
  // same generator and seed).
  exec::Interpreter interpreter(model, {.threads = options.threads});
  const std::vector<npy::Array> inputs = exec::PrepareInputs(model->main(), {}, options.seed);
  for (size_t i = 0; i < inputs.size(); ++i) interpreter.SetInput(static_cast<int>(i), inputs[i]);
  interpreter.Invoke();
  for (int i = 0; i < interpreter.num_outputs() && i < static_cast<int>(m.result.outputs.size()); ++i)
    m.outputs.push_back(analyze::Compare(interpreter.Output(i), m.result.outputs[i]));
  return m;
}

void Decide(CheckReport& r) {
  std::vector<std::string> passes;
  auto add = [&](const std::string& p) {
    if (!p.empty() && std::find(passes.begin(), passes.end(), p) == passes.end()) passes.push_back(p);
  };
  int issues = 0;
  for (const lint::Finding& f : r.lint.findings)
    if (Matters(f)) {
      ++issues;
      add(f.fix_pass);
    }
  // A break with no mechanism behind it (precision-loss) whose graph outputs
  // still hold is drift to note, not a reason to move work off the GPU.
  bool drift_only = r.bisect.first_break && r.bisect.cause == analyze::Cause::kPrecisionLoss;
  for (const analyze::Metrics& m : r.bisect.outputs)
    if (m.nonfinite_got > m.nonfinite_ref || (!std::isnan(m.correlation) && m.correlation < kOutputsHold) ||
        !(m.relative_error <= kOutputDrift))
      drift_only = false;
  if (r.bisect.first_break && !drift_only) {
    ++issues;
    add(r.bisect.fix_pass);
  }
  r.passes = passes;
  const bool split = std::any_of(passes.begin(), passes.end(), NeedsSplit);
  if (issues == 0) {
    r.verdict = Verdict::kGpuClean;
    r.verdict_line = "GPU-clean: every op is delegated on " + r.lint.target + " and fp16 numbers hold";
  } else if (split) {
    r.verdict = Verdict::kNeedsSplit;
    r.verdict_line = fmt::format("needs a split or hybrid placement: {}", fmt::join(passes, ", "));
  } else {
    r.verdict = Verdict::kFixable;
    r.verdict_line = fmt::format("fixable with these passes: {}", fmt::join(passes, ", "));
  }
  if (drift_only) {
    const analyze::TensorDivergence& d = r.bisect.tensors[*r.bisect.first_break];
    r.verdict_line += fmt::format("; note: fp16 drift at op {} ({}), outputs within {:.0f}%", d.op_index, d.op_name,
                                  100 * kOutputDrift);
  }
  // The real delegate's numbers outrank the emulation.
  double worst = 1;
  for (const analyze::Metrics& m : r.webgpu.outputs)
    if (!std::isnan(m.correlation)) worst = std::min(worst, m.correlation);
  if (worst < 0.99) {
    if (r.verdict == Verdict::kGpuClean) r.verdict = Verdict::kNeedsSplit;
    r.verdict_line += fmt::format("; measured on WebGPU the outputs disagree with fp32 (correlation {:.4f})", worst);
  }
  std::vector<std::string> in_graph;
  for (const std::string& p : passes)
    if (!NeedsSplit(p) && rewrite::FindPass(p)) in_graph.push_back(p);
    else if (!NeedsSplit(p)) r.manual_passes.push_back(p);
  if (!in_graph.empty())
    r.fix_command = fmt::format("gpuclean fix {} -o {} --target {} --passes {}", r.model,
                                fs::path(r.model).stem().string() + ".fixed.tflite", r.lint.target,
                                fmt::join(in_graph, ","));
}

std::string Num(double x) { return std::isfinite(x) ? fmt::format("{:.6f}", x) : (std::isnan(x) ? "n/a" : "inf"); }

}  // namespace

std::string_view VerdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kGpuClean: return "gpu-clean";
    case Verdict::kFixable: return "fixable";
    case Verdict::kNeedsSplit: return "needs-split";
  }
  return "unknown";
}

CheckReport Check(const std::string& model_path, const CheckOptions& options) {
  auto progress = [&](const std::string& s) {
    if (options.progress) options.progress(s);
  };
  CheckReport r;
  r.model = model_path;
  // Bad input fails here, before any progress line.
  auto model = std::make_shared<const ir::Model>(format::ReadModel(model_path));
  r.matrix = lint::LoadMatrix((options.data_dir.empty() ? lint::DefaultDataDir() : options.data_dir) + "/compat",
                              options.target);
  progress("[1/4] inspect");
  r.inspect = inspect::Summarize(*model);

  progress("[2/4] lint against " + options.target);
  r.lint = lint::Lint(*model, r.matrix);
  r.lint.model = model_path;

  progress("[3/4] bisect fp32 vs fp16-compute");
  const std::vector<npy::Array> inputs = exec::PrepareInputs(model->main(), {}, options.seed);
  r.bisect = analyze::Bisect({model, "fp32", exec::Precision::kFp32},
                             {model, "fp16-compute", exec::Precision::kFp16Compute}, inputs,
                             {.threads = options.threads});
  r.bisect.model = model_path;

  progress("[4/4] real WebGPU delegate (LiteRT.js in headless Chromium)");
  r.webgpu = ProbeWebGpu(model_path, model, options);
  Decide(r);
  if (!r.fix_command.empty()) {
    progress("gpuclean fix, dry run: apply and prove the suggested passes");
    rewrite::FixOptions fix;
    fix.target = options.target;
    fix.seed = options.seed;
    for (const std::string& p : r.passes)
      if (rewrite::FindPass(p)) fix.passes.push_back(p);
    const rewrite::FixResult result = rewrite::Fix(*model, fix);
    if (!result.ok) {
      r.fix_dry_run = "dry run failed: " + result.failure;
    } else {
      r.fix_dry_run = fmt::format("dry run: {} site(s) rewritten and proven", result.changed_sites());
      if (!result.after.residency.empty()) r.fix_dry_run += "; after it, " + lint::PredictedLine(result.after.residency[0]);
    }
  }
  return r;
}

nlohmann::json ToJson(const CheckReport& r) {
  nlohmann::json j;
  j["model"] = r.model;
  j["verdict"] = VerdictName(r.verdict);
  j["verdict_line"] = r.verdict_line;
  j["passes"] = r.passes;
  j["fix_command"] = r.fix_command.empty() ? nlohmann::json() : nlohmann::json(r.fix_command);
  j["fix_dry_run"] = r.fix_dry_run.empty() ? nlohmann::json() : nlohmann::json(r.fix_dry_run);
  j["manual_passes"] = r.manual_passes;
  j["inspect"] = r.inspect;
  j["lint"] = lint::ToJson(r.lint, r.matrix);
  nlohmann::json bisect = analyze::ToJson(r.bisect);
  bisect.erase("tensors");  // `gpuclean bisect --json` has them all
  j["bisect"] = bisect;
  nlohmann::json webgpu = {{"ran", r.webgpu.ran}};
  if (!r.webgpu.ran) {
    webgpu["skipped_because"] = r.webgpu.skipped_because;
  } else {
    webgpu["ok"] = r.webgpu.result.ok;
    if (!r.webgpu.result.ok) webgpu["error"] = r.webgpu.result.error;
    webgpu["residency"] = probe::ToJson(r.webgpu.result.residency);
    webgpu["outputs_vs_fp32"] = nlohmann::json::array();
    for (const analyze::Metrics& m : r.webgpu.outputs) webgpu["outputs_vs_fp32"].push_back(analyze::ToJson(m));
  }
  j["webgpu"] = webgpu;
  return j;
}

std::string RenderText(const CheckReport& r) {
  std::string s = fmt::format("gpuclean check {}\n\n", r.model);
  s += fmt::format("model: {} ops, {} inputs, {} outputs, max rank {}\n", r.inspect.value("op_count", 0),
                   r.inspect.contains("inputs") ? r.inspect["inputs"].size() : 0,
                   r.inspect.contains("outputs") ? r.inspect["outputs"].size() : 0, r.inspect.value("max_rank", 0));

  s += fmt::format("\nlint ({}): {} error(s), {} warning(s)\n", r.lint.target, r.lint.count(lint::Severity::kError),
                   r.lint.count(lint::Severity::kWarning));
  for (const lint::SubgraphResidency& res : r.lint.residency) s += "  " + lint::PredictedLine(res) + "\n";
  int shown = 0;
  for (const lint::Finding& f : r.lint.findings) {
    if (!Matters(f)) continue;
    if (++shown > 8) {
      s += fmt::format("  ... {} more (gpuclean lint {})\n", r.lint.count(lint::Severity::kError) +
                                                                 r.lint.count(lint::Severity::kWarning) - 8, r.model);
      break;
    }
    s += fmt::format("  {} node {} {}: {} -> {}\n", lint::SeverityName(f.severity), f.node, f.op, f.why,
                     f.fix_pass.empty() ? "no known rewrite" : f.fix_pass);
  }

  s += "\nfp16 (fp32 vs fp16-compute emulation):\n";
  for (size_t i = 0; i < r.bisect.outputs.size(); ++i)
    s += fmt::format("  output {}: correlation {}  max|diff| {:.4g}  non-finite {}\n", i,
                     Num(r.bisect.outputs[i].correlation), r.bisect.outputs[i].max_abs_diff,
                     r.bisect.outputs[i].nonfinite_got);
  if (r.bisect.first_break) {
    const analyze::TensorDivergence& d = r.bisect.tensors[*r.bisect.first_break];
    s += fmt::format("  first break: op {} ({}) '{}': correlation {}\n  cause: {} - {}\n  fix: {} - {}\n",
                     d.op_index, d.op_name, d.name, Num(d.metrics.correlation), analyze::CauseName(r.bisect.cause),
                     r.bisect.why, r.bisect.fix_pass, r.bisect.fix);
  } else {
    s += "  no op diverges\n";
  }

  s += "\nmeasured on LiteRT.js WebGPU (SwiftShader, fp16):\n";
  if (!r.webgpu.ran) {
    s += "  not run: " + r.webgpu.skipped_because + "\n";
  } else if (!r.webgpu.result.ok) {
    s += "  failed: " + r.webgpu.result.error + "\n";
  } else {
    s += "  " + probe::Summarize(r.webgpu.result.residency) + "\n";
    for (size_t i = 0; i < r.webgpu.outputs.size(); ++i) {
      const analyze::Metrics& m = r.webgpu.outputs[i];
      s += fmt::format("  output {} vs our fp32: correlation {}  max|diff| {:.4g}{}\n", i, Num(m.correlation),
                       m.max_abs_diff,
                       m.bit_identical ? "  BIT-IDENTICAL to fp32: the GPU did not run it (silent fallback)" : "");
    }
  }

  s += "\nverdict: " + r.verdict_line + "\n";
  if (!r.fix_command.empty()) s += "fix: " + r.fix_command + "\n     " + r.fix_dry_run + "\n";
  if (!r.manual_passes.empty())
    s += fmt::format("by hand (no automatic rewrite yet): {}\n", fmt::join(r.manual_passes, ", "));
  return s;
}

}  // namespace gpuclean::check
