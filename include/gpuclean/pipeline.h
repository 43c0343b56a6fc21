#pragma once
// Pipelines: several graphs with host steps between them (docs/pipeline.md).
// A spec (PREFIX.pipeline.json) names the graphs and where they run, the
// host-fed constants, the host steps, and the wiring of named values from
// the pipeline's inputs through every stage to its outputs. `gpuclean split`
// writes one (graphs only); `split --host` and hand-written specs add host
// steps. `gpuclean pipeline run` runs it, `pipeline prove` checks it against
// the monolithic model with task gates.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuclean/error.h"
#include "gpuclean/exec.h"
#include "gpuclean/gates.h"
#include "gpuclean/npy.h"
#include "gpuclean/probe.h"
#include "gpuclean/runtime.h"
#include "gpuclean/task_gates.h"
#include "gpuclean/valid_rows.h"

namespace gpuclean::pipeline {

inline constexpr const char* kSpecFormat = "gpuclean.pipeline";
inline constexpr int kSpecVersion = 1;

struct ValueInfo {
  ir::DType dtype = tfl::TensorType_FLOAT32;
  std::vector<int64_t> shape;  // -1: not known until run time
};

struct Stage {
  enum class Kind { kGraph, kHost };
  Kind kind = Kind::kGraph;
  std::string name;
  // Graph stages: the model file (as written in the spec, relative to the
  // spec's folder) and where it runs: "gpu" or "cpu".
  std::string graph;
  std::string placement = "gpu";
  // Host stages: the step (host_steps.h's HostSteps()) and its parameters.
  std::string host;
  nlohmann::json params;
  // Value names, in the graph's input/output order (graph stages) or the
  // step's (host stages).
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  int ops = 0;  // graph stages: op count (informational)
};

struct Constant {
  std::string name;
  std::string file;  // .npy, relative to the spec's folder
};

struct Spec {
  std::string path;    // where it was read from or will be written
  std::string source;  // the model it was made from, if any
  std::vector<std::string> inputs;
  std::vector<Constant> constants;
  std::vector<Stage> stages;  // in the file's order
  std::vector<std::string> outputs;
  // Outputs whose length depends on the data: padded, with the output that
  // counts their valid rows (convert writes them; Run cuts them).
  std::vector<PaddedOutput> valid_rows;
  nlohmann::json proof;  // what the writer proved, kept as written

  // Filled by LoadSpec: per stage its model (null for host stages), per
  // constant its value.
  std::vector<std::shared_ptr<const ir::Model>> models;
  std::vector<npy::Array> constant_values;
};

// Reads and checks a spec: the format and version, every graph and constant
// file (loaded), the wiring (every value produced once, every input produced
// by something, no cycles, outputs exist), input/output counts against the
// models and the host steps, and dtypes/shapes between stages where both
// sides are known before running. Error(kBadInput) with one line naming the
// stage and value otherwise; Error(kIo) for an unreadable file.
Spec LoadSpec(const std::string& path);
nlohmann::json ToJson(const Spec& spec);
// Writes atomically. Graph and constant files must already be beside it.
void WriteSpec(const Spec& spec, const std::string& path);

// The stages in an order that runs every producer before its consumers
// (file order where the wiring allows); Error(kBadInput) naming a cycle.
std::vector<int> RunOrder(const Spec& spec);

using ::gpuclean::Runtime;
using ::gpuclean::RuntimeName;
// "ours" | "litert-wasm" | "litert-webgpu" | "litert" (= litert-webgpu: GPU
// stages on the WebGPU delegate, CPU stages on wasm, one page); Error(kUsage).
Runtime ParseRuntime(const std::string& name);
// The numeric mode a --precision name means on `runtime`: "fp16" on
// litert-webgpu is the delegate's fp16 (modelled as fp16-fused); otherwise
// exec::ParsePrecision (Error(kUsage) for an unknown name).
exec::Precision ParsePrecisionFor(Runtime runtime, const std::string& name);

struct RunOptions {
  Runtime runtime = Runtime::kOurs;
  // ours: the numeric mode of "gpu" stages ("cpu" stages run fp32).
  // litert-webgpu: fp16 when not kFp32.
  exec::Precision precision = exec::Precision::kFp32;
  int threads = 1;
  uint32_t seed = 0;      // for pipeline inputs not given (exec::GenerateInput)
  std::string work_dir;   // LiteRT runtimes: stage inputs/outputs go here
  bool progress = false;  // one line per stage on stderr
};

struct StageRun {
  std::string name;
  std::string where;  // "ours fp32", "litert-webgpu", "host", ...
  double ms = 0;      // wall time of the stage, transfers and start-up included
  // The runtime's own time for the graph: LiteRT's invoke (median of its
  // runs), or the same as ms for our interpreter and host steps.
  double run_ms = 0;
  std::optional<probe::Residency> residency;  // litert-webgpu graph stages
};
nlohmann::json ToJson(const StageRun& stage);

struct RunResult {
  std::vector<npy::Array> inputs;            // the pipeline inputs as fed, spec order
  std::vector<npy::Array> outputs;           // the pipeline outputs, spec order
  std::map<std::string, npy::Array> values;  // every value computed
  // litert-webgpu: Chromium pages the graph stages ran in (one per Run: all
  // graphs share its WebGPU device).
  int browser_pages = 0;
  std::vector<StageRun> stages;  // in run order
};
// {"stages": [ToJson(stage)...], "browser_pages": n (when pages ran)}: the
// per-stage record `pipeline run` writes and the Python binding returns.
nlohmann::json StagesJson(const RunResult& result);

// The pipeline inputs to feed: `given` (name -> .npy path) read, the rest
// generated from the graph input each one feeds (exec::GenerateInput with
// the pipeline input's index) or, for an input only host steps read, from
// the `monolith` graph's input of that name when there is one (the model a
// split was cut from). Error(kUsage) for a name that is no input.
std::vector<npy::Array> PrepareInputs(const Spec& spec, const std::map<std::string, std::string>& given, uint32_t seed,
                                      const ir::Subgraph* monolith = nullptr);
// The same with the given values in memory (name -> array).
std::vector<npy::Array> PrepareInputArrays(const Spec& spec, std::map<std::string, npy::Array> given, uint32_t seed,
                                           const ir::Subgraph* monolith = nullptr);

// Runs every stage in RunOrder. A value whose dtype or shape does not fit
// the graph or step that takes it is Error(kBadInput) naming both.
RunResult Run(const Spec& spec, const std::vector<npy::Array>& inputs, const RunOptions& options);

// ---------------------------------------------------------------- prove
struct ProveOptions {
  RunOptions run;
  std::vector<analyze::GateSpec> gates;  // empty: inferred per output (task_gates.h)
  analyze::GateOptions gate_options;
  std::map<std::string, std::string> inputs;       // name -> .npy
  std::map<std::string, npy::Array> input_values;  // name -> value in memory (used instead of `inputs` when set)
  // With a box gate (box_iou, or iou with boxes) on an output [..., N, 4]:
  // pair the chain's detections with the monolith's by box before gating,
  // and reorder every output with the same leading axes alike.
  bool match_boxes = true;
  // Outputs shaped like a detector's (analyze::InferDetectionLayout): judged
  // together - every reference detection above the score threshold found
  // again - in place of their per-position gates. On when no gate is given
  // (`gates` empty), or when `detections_given`.
  bool detections = true;
  bool detections_given = false;
  analyze::DetectionGateOptions detection_gate;
};

struct OutputVerdict {
  std::string name;
  std::string reference_name;  // the monolith's output it was compared with
  int reference_index = -1;    // its position in ProveReport::reference
  std::vector<analyze::GateResult> gates;
  bool passed = false;
};

struct ProveReport {
  std::string spec, against, runtime;
  RunResult chain;
  std::vector<npy::Array> reference;  // the monolith's outputs, in its order
  std::vector<OutputVerdict> outputs;
  bool passed = false;
  // Detections paired by box (ProveOptions::match_boxes): the boxes output,
  // how many pairs changed position, and the outputs reordered with it.
  std::string matched_by;
  int64_t matched_moved = 0;
  // Reference detections without a counterpart box (a different top-K
  // selection); when at most 2% of them, left out of the gates.
  int64_t selection_swaps = 0;
  bool swaps_left_out = false;
  std::vector<std::string> matched_outputs;
  // The detector's outputs judged together, when that gate applied.
  std::optional<analyze::GateResult> detections;
};

// Runs the chain and the monolith (a .tflite on gpuclean's interpreter in
// fp32, an .onnx on onnxruntime) on the same inputs and applies the gates
// output by output (pipeline outputs matched to the monolith's by name,
// else by position).
ProveReport Prove(const Spec& spec, const std::string& against, const ProveOptions& options);
std::string RenderProve(const ProveReport& report);
nlohmann::json ToJson(const ProveReport& report);

}  // namespace gpuclean::pipeline
