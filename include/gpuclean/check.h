#pragma once
// `gpuclean check`: the main job. Inspect, lint with predicted residency,
// fp32 vs fp16-compute bisect, and - where Node and Chromium are installed -
// the real WebGPU delegate's residency and numbers, folded into one verdict.
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gpuclean/bisect.h"
#include "gpuclean/lint.h"
#include "gpuclean/probe.h"

namespace gpuclean::check {

struct CheckOptions {
  std::string target = lint::kDefaultTarget;
  std::string data_dir;  // empty: lint::DefaultDataDir()
  uint32_t seed = 0;
  int threads = 1;
  // Run the WebGPU probe when Node and Chromium are found.
  bool probe = true;
  // Progress lines ("[2/4] lint"), for stderr.
  std::function<void(const std::string&)> progress;
};

enum class Verdict { kGpuClean, kFixable, kNeedsSplit };
std::string_view VerdictName(Verdict verdict);

struct MeasuredProbe {
  bool ran = false;
  std::string skipped_because;  // when !ran
  probe::ProbeResult result;
  std::vector<analyze::Metrics> outputs;  // WebGPU fp16 against our fp32
};

struct CheckReport {
  std::string model;
  nlohmann::json inspect;
  lint::Matrix matrix;
  lint::Report lint;
  analyze::BisectReport bisect;
  MeasuredProbe webgpu;
  Verdict verdict = Verdict::kGpuClean;
  std::string verdict_line;
  std::vector<std::string> passes;  // rewrites that would fix it, in order
  std::string fix_command;          // suggested `gpuclean fix` line, empty if none
  std::string fix_dry_run;          // what that fix did when check tried it (proven or why not)
  std::vector<std::string> manual_passes;  // suggested passes with no automatic rewrite
};

CheckReport Check(const std::string& model_path, const CheckOptions& options);

nlohmann::json ToJson(const CheckReport& report);
std::string RenderText(const CheckReport& report);

}  // namespace gpuclean::check
