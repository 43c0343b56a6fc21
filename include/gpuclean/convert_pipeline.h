#pragma once
// `gpuclean convert --host-ops auto`: an ONNX model that cannot be one GPU
// graph becomes a pipeline (docs/pipeline.md): GPU graphs with CPU graphs
// (or host steps) between them, proven against onnxruntime in fp32 and, for
// each target, with the GPU stages in the target's arithmetic - before the
// spec is kept.
//
//   convert::Options o;  o.onnx_path = "m.onnx";  o.output_path = "m";  // the prefix
//   convert::PipelineResult r = convert::ConvertToPipeline(o);
//   r.exit_code();  r.spec_path;  // m.pipeline.json when written
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuclean/convert.h"
#include "gpuclean/gates.h"
#include "gpuclean/pipeline.h"
#include "gpuclean/split.h"

namespace gpuclean::convert {

struct PipelineOptions {
  split::Islands islands = split::Islands::kCpuGraphs;
  // Per target whose numeric model is not fp32: the pipeline again with its
  // GPU stages in that arithmetic (CPU stages fp32), gated the same way.
  bool fp16_check = true;
  // When that check fails and a selection (TOPK_V2, ARG_MAX) sits in a CPU
  // graph, measure the placement that ranks in fp32: its score head moves
  // into the CPU graph too (split::SelectionScoreChains); kept when it
  // passes.
  bool exact_selections = true;
  // Gates for both checks; empty: inferred per output from onnxruntime's
  // outputs, as `check` infers them (task_gates.h).
  std::vector<analyze::GateSpec> gates;
  analyze::GateOptions gate_options;
};

// One run of the written pipeline against onnxruntime.
struct PipelineCheck {
  std::string target;         // empty: the fp32 proof
  std::string numeric_model;  // "fp32", "fp16-fused", ...
  pipeline::ProveReport report;
};

struct PipelineResult {
  Result conversion;  // the monolith, converted with lint errors allowed
  // Empty when no op needed an island: the monolith is the result then.
  bool cut_made = false;
  split::HostCut cut;
  std::vector<std::string> stays;           // ops the target keeps off the GPU that no island can hold
  std::string cleanup_text;                 // per GPU graph and target: lint before -> after
  std::vector<std::string> ceiling_splits;  // GPU graphs split at a target's compile ceiling
  int errors_left = 0;                      // lint errors left in the GPU graphs, all targets
  std::vector<PipelineCheck> checks;        // fp32 first, then one per fp16 target
  std::string spec_path;                    // set when written
  // No op needed to leave the GPU and the conversion passed: the one graph,
  // written as PREFIX.tflite (host-fed constants beside it).
  std::string single_path;
  bool written = false;
  std::string target;  // as given ("A,B")
  // Set when the selection placement was measured: both verdicts, and which was kept.
  std::string selection_note;

  bool proven() const;    // every check passed
  int exit_code() const;  // 0: written, proven, no lint error left; 1 otherwise
  std::string RenderText() const;
  nlohmann::json ToJson() const;
};

// options.output_path is the prefix (PREFIX.pipeline.json, PREFIX.graph<k>
// .tflite, PREFIX.const.*.npy). Error(kUsage) without one. Nothing is kept
// unless every check passes and no lint error is left; with
// options.allow_remaining, a pipeline proven in fp32 is kept whatever its
// lint and arithmetic checks say (exit 1).
PipelineResult ConvertToPipeline(const Options& options, const PipelineOptions& pipeline_options = {});

}  // namespace gpuclean::convert
