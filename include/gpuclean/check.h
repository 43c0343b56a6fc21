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
#include "gpuclean/image.h"
#include "gpuclean/lint.h"
#include "gpuclean/probe.h"
#include "gpuclean/run.h"
#include "gpuclean/task_gates.h"

namespace gpuclean::check {

struct CheckOptions {
  std::string target = lint::kDefaultTarget;
  std::string data_dir;  // empty: lint::DefaultDataDir()
  uint32_t seed = 0;
  int threads = 1;
  // Run the WebGPU probe when Node and Chromium are found.
  bool probe = true;
  // Inputs: KEY=FILE.npy pairs; the rest generated from `seed` as `run` does.
  std::vector<std::pair<std::string, std::string>> inputs;
  // Photographs (--image); with no input given at all, the default
  // photograph feeds the first input shaped like an image unless
  // default_image is off (--no-image).
  image::ImageInputs images;
  bool default_image = true;
  std::vector<exec::InputShape> input_shapes;
  // Task gates per output (--gate [OUT:]GATE); outputs without one get the
  // gate InferTaskGates picks.
  std::vector<analyze::GateSpec> gates;
  analyze::GateOptions gate_options;
  // Progress lines ("[2/4] lint"), for stderr.
  std::function<void(const std::string&)> progress;
};

// kNotVerified: lint found nothing to fix, but a part that decides the
// verdict (the fp16 numbers) could not run; the report says which and why.
enum class Verdict { kGpuClean, kFixable, kNeedsSplit, kNotVerified };
std::string_view VerdictName(Verdict verdict);

struct MeasuredProbe {
  bool ran = false;
  std::string skipped_because;  // when !ran
  probe::ProbeResult result;
  // The reference the outputs are compared with: our fp32 run, or LiteRT.js
  // wasm (fp32) when our interpreter cannot run the model.
  std::string reference;
  std::vector<analyze::Metrics> outputs;  // WebGPU fp16 against the reference
  std::vector<analyze::OutputGateResult> gates;
};

struct CheckReport {
  std::string model;
  nlohmann::json inspect;
  lint::Matrix matrix;
  lint::Report lint;
  std::string inputs_source;  // what the numbers were measured on
  std::string numeric_model;  // the target's fp16 model (fp16-compute, fp16-fused)
  // Empty when fp32 vs fp16 ran; else the one line saying why it could not
  // (e.g. no kernel for a custom op).
  std::string numerics_skipped;
  analyze::BisectReport bisect;
  std::vector<analyze::OutputGateResult> fp16_gates;  // fp16 emulation against fp32, per task gate
  MeasuredProbe webgpu;
  Verdict verdict = Verdict::kGpuClean;
  std::string verdict_line;
  std::vector<std::string> passes;         // rewrites that would fix it, in order
  std::string fix_command;                 // suggested `gpuclean fix` line, empty if none
  std::string fix_dry_run;                 // what that fix did when check tried it (proven or why not)
  std::vector<std::string> manual_passes;  // suggested passes with no automatic rewrite
};

CheckReport Check(const std::string& model_path, const CheckOptions& options);

nlohmann::json ToJson(const CheckReport& report);
std::string RenderText(const CheckReport& report);

}  // namespace gpuclean::check
