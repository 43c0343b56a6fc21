#pragma once
// `gpuclean convert`: ONNX in, a .tflite out that computes the same function,
// proven against onnxruntime before a byte is written (docs/convert.md).
//
//   convert::Options o;
//   o.onnx_path = "model.onnx";
//   o.output_path = "model.tflite";
//   convert::Result r = convert::Convert(o);   // r.report.written, r.model
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuclean/gates.h"
#include "gpuclean/ir.h"
#include "gpuclean/lint.h"
#include "gpuclean/npy.h"

namespace gpuclean::convert {

// The proof's bound with --weights fp16: half-precision weights are a stated
// bound, not exactness.
constexpr double kFp16WeightsAtol = 1e-2;
constexpr double kFp16WeightsMinCorrelation = 0.9999;
// With --weights int8 (conv-like weights int8, one symmetric scale per tensor):
// measured on the fixtures (docs/convert.md, "int8 weights").
constexpr double kInt8WeightsAtol = 0.1;
constexpr double kInt8WeightsMinCorrelation = 0.999;
// Below this, outputs in an fp16 target's arithmetic count as broken and
// --target rebuilds the norms in their fp16-safe forms.
constexpr double kFp16MinCorrelation = 0.999;

struct Options {
  std::string onnx_path;
  std::string output_path;  // empty: convert and prove, write nothing
  // Pins for graph inputs with unknown dimensions (NAME -> dims).
  std::map<std::string, std::vector<int64_t>> input_shapes;
  // Graph inputs fixed at convert time (NAME -> values in row-major order):
  // folded into the graph, which no longer has them as inputs (--input-value).
  std::map<std::string, std::vector<double>> input_values;
  // Real inputs for the first proof set (ONNX layout and dtype, by graph
  // input name): a photograph, a chunk of speech. Inputs not named are
  // seeded as in the other sets.
  std::map<std::string, npy::Array> proof_inputs;
  // Rank-4 float inputs and outputs in NHWC instead of ONNX's NCHW.
  bool nhwc_io = false;
  // Float weights stored as float16 with DEQUANTIZE (half the file).
  bool fp16_weights = false;
  // Conv-like weights stored int8 with DEQUANTIZE (about a quarter).
  bool int8_weights = false;
  // Prove against onnxruntime before writing (off: write unproven; the
  // report says so).
  bool prove = true;
  int proof_seeds = 2;
  // Every output within atol * max(1, |ref|), correlation >= min_correlation
  // (with fp16_weights at least kFp16WeightsAtol / kFp16WeightsMinCorrelation).
  double atol = 1e-4;
  double min_correlation = 0.99999;
  // The GPU target the result must be clean for (a data/compat id, or
  // several joined by commas: clean for each, rewrites chosen for all): after
  // lowering, lint for it, apply the proven rewrites lint suggests
  // (rewrite::Fix) and re-lint. "none" keeps the plain lowering.
  std::string target = lint::kDefaultTarget;
  std::string data_dir;  // holds compat/; empty: lint::DefaultDataDir()
  // Lint errors left after the rewrites: false writes nothing, true writes
  // the proven model anyway. Either way the report says the model is not
  // GPU-clean (exit 1).
  bool allow_remaining = false;
  // Where the target computes wrong numbers with large baked constants
  // (lint rule large-constant), feed them from the host: each becomes a
  // graph input written beside the model as OUT.<input>.npy (the report
  // names them). false keeps them baked and leaves the finding.
  bool host_feed_large_constants = true;
  // After writing, run the model on LiteRT.js's WebGPU delegate (fp16) on
  // proof input set 1 and compare it with onnxruntime (needs Node and
  // Chromium; the report says why when it cannot run).
  bool probe = false;
  // Receives one line per step of a long conversion ("proving: seed 1/2").
  std::function<void(const std::string&)> progress;
};

struct OutputProof {
  std::string name;
  int seed = 0;
  bool ok = false;
  double max_abs_diff = 0;
  double max_scaled_diff = 0;  // max |got - ref| / max(1, |ref|)
  double correlation = 1;
  // onnxruntime's own fp32 noise on this output and input set: max scaled
  // difference between its optimised and unoptimised runs (measured only
  // when the fixed bound fails); -1 when not measured.
  double noise_floor = -1;
  // For a model with float16 values: how far storing each of them as a half
  // (as a float16 runtime would) moves this output, measured on our
  // interpreter; part of noise_floor. -1 when not measured.
  double half_storage_floor = -1;
  // For a quantized model: the lowest correlation of onnxruntime's own
  // other runs with its reference, and the correlation this output was
  // held to from it. -1 when not measured.
  double correlation_floor = -1;
  double min_correlation = -1;
  double bound = 0;  // the scaled-difference bound this output was held to
  std::string why;   // when !ok
};

// An output whose difference exceeds the fixed bound is held to
// kNoiseMultiple times onnxruntime's own optimised-vs-unoptimised
// difference on the same input instead, when that is larger: a deep network's
// fp32 accumulation order alone moves its outputs by that much.
constexpr double kNoiseMultiple = 8.0;

// The first ONNX node whose output differs between onnxruntime and the
// converted graph on our interpreter (layout undone).
struct Divergence {
  bool found = false;
  std::string node;    // "Conv 'conv1'"
  std::string tensor;  // ONNX tensor name
  double max_abs_diff = 0;
  double max_scaled_diff = 0;
  double correlation = 1;
  int compared = 0;  // tensors compared before (and including) it
  // The search ran (a proof failed): on which input set (1-based), and why
  // it found no node when it did not.
  bool searched = false;
  int set = 0;
  std::string none_because;
};

// What --target did: lint before and after the rewrites, which ran.
struct TargetReport {
  std::string target;  // empty: --target none
  int errors_before = 0, warnings_before = 0, errors_after = 0, warnings_after = 0;
  std::string predicted_before, predicted_after;  // lint::PredictedLine of subgraph 0
  std::vector<std::string> passes;                // "rank5-to-rank4 (exact, 12 sites)"
  std::vector<std::string> not_applied;           // suggestions fix could not apply, with why
  std::vector<std::string> remaining;             // error findings left, each with why
  // Constants moved to host-fed inputs, each "NAME [shape]: why".
  std::vector<std::string> host_fed;
  // Several targets ("A,B"): one line each, "ID: E error(s) -> E'; predicted
  // ..."; the counts above are their sums.
  std::vector<std::string> per_target;
  // Outputs in the target's numeric model (our interpreter) against fp32,
  // worst correlation; numeric_model empty when not checked (fp32 target).
  std::string numeric_model;
  double fp16_correlation = 1;
  // A TOPK_V2 decides which rows outputs hold: they are paired by the
  // selected indices first; slots one run selected and the other did not.
  int fp16_selection_swaps = 0;
  // What fp16_correlation had to reach (kFp16MinCorrelation, or lower for
  // a quantized model, by its own noise) and whether it fell short.
  double fp16_min_correlation = 0;
  // The task gates the outputs imply, fp32 against the target's arithmetic
  // (as `check` infers them): they decide fp16_broken; the correlation bar
  // only where none applies.
  std::vector<analyze::GateResult> fp16_gates, fp16_gates_before;
  bool fp16_broken = false;
  // Set when the fp16-safe rewrites (norms, dot-product scales) were applied because of it.
  std::optional<double> fp16_correlation_before;
  // Set instead when they were applied because fp32 values already passed
  // half's range (the planned model's fp16 run was not needed): the largest
  // such value and its tensor.
  std::optional<double> fp32_largest_before;
  std::string fp32_largest_tensor;
  // Bound the rewrites add to the onnxruntime proof (approx passes).
  double added_atol = 0;
  // No error-level finding after the rewrites, and outputs in the target's
  // arithmetic within kFp16MinCorrelation of fp32.
  bool clean = true;
  std::string failure;  // one line when a rewrite failed its proof
};

// The measured run on the real WebGPU delegate (--probe).
struct ProbeReport {
  bool ran = false;
  std::string skipped_because;
  std::string residency;  // probe::Summarize
  bool fully_delegated = false;
  struct Output {
    std::string name;
    double max_abs_diff = 0, correlation = 1;
  };
  std::vector<Output> outputs;  // WebGPU fp16 against onnxruntime fp32, seed 1
  double min_correlation = 1;
};

struct Report {
  std::string onnx_path;
  std::string output_path;
  bool written = false;
  bool proven = false;
  bool proof_run = false;
  bool first_set_given = false;  // proof set 1 is Options::proof_inputs, not seeded
  std::string producer;
  int64_t opset = 0, original_opset = 0;
  // Inputs pinned by --input-value, "NAME=v0,v1,...": folded, not inputs of the .tflite.
  std::vector<std::string> pinned_inputs;
  // An fp16 model's float weights kept as float16 + DEQUANTIZE (lossless).
  int half_weights_kept = 0;
  // Conv-like weight tensors stored int8 + DEQUANTIZE (--weights int8).
  int int8_weights = 0;
  std::map<std::string, int> ops_in;   // ONNX op histogram
  std::map<std::string, int> ops_out;  // TFLite op histogram
  std::map<std::string, int> folded;   // ONNX op type -> nodes folded at convert time
  int64_t nodes_in = 0;
  // TRANSPOSE ops left in the graph, each with why it exists.
  std::vector<std::string> transposes;
  std::vector<OutputProof> proof;
  double atol = 0, min_correlation = 0;  // the bound the proof used
  Divergence divergence;
  TargetReport target;
  ProbeReport probe;
  double import_ms = 0, lower_ms = 0, target_ms = 0, prove_ms = 0, probe_ms = 0, total_ms = 0;
  size_t peak_rss_bytes = 0;
  size_t tflite_bytes = 0;
  nlohmann::json ToJson() const;
  std::string RenderText() const;
};

struct Result {
  Report report;
  ir::Model model;
  // Inputs the rewrites added that the host feeds (written beside the model).
  std::vector<std::pair<std::string, npy::Array>> host_inputs;
  // 0: proven (and GPU-clean for the target); 1: the proof failed or lint
  // errors remain for the target.
  int exit_code() const;
};

// Errors: kBadInput (malformed model), kUnsupported (ops or features we do
// not convert; one line naming them all), kUsage (bad options). A failed
// proof is not an error: report.proven is false and nothing is written.
Result Convert(const Options& options);

// Proves a .tflite that convert wrote (its origins metadata gives each
// tensor's ONNX name and layout) against the ONNX model at `onnx_path`, as
// convert's proof does: the seeded input sets of `options` (proof_seeds,
// proof_inputs), its bound (atol, min_correlation), the noise floor, and on
// failure the first diverging node. Returns the report's proof fields.
Report ProveConverted(const std::string& onnx_path, const ir::Model& tflite, const Options& options = {});

// --input-value specs, "NAME=v0,v1,..." (numbers) -> Options::input_values.
// Throws Error(kUsage) for a malformed spec.
std::map<std::string, std::vector<double>> ParseInputValues(const std::vector<std::string>& specs);

// Bisect across formats: runs `onnx_path` on onnxruntime and `tflite` on our
// interpreter with `inputs` (ONNX layout, ONNX input order; empty: the
// proof's generated set for `seed`) and names the first ONNX node whose
// output differs beyond atol * max(1, |ref|). Tensors are matched through the
// origins convert stores in the .tflite's metadata (ONNX name and layout per
// tensor); a .tflite without them is matched by tensor name.
// Intermediates are fetched in ONNX order, about `chunk_bytes` of them per
// run on each side, so memory stays bounded on 1024x1024 models; the search
// stops at the first chunk that diverges.
constexpr int64_t kBisectChunkBytes = int64_t{256} << 20;
Divergence BisectAcrossFormats(const std::string& onnx_path, const ir::Model& tflite,
                               std::vector<npy::Array> inputs = {}, uint32_t seed = 1, double atol = 1e-4,
                               int64_t chunk_bytes = kBisectChunkBytes);

// Metadata entry convert writes: {"<tflite tensor>": {"onnx": name, "perm": [...]}}.
constexpr const char* kOriginsMetadata = "gpuclean.onnx_origins";

}  // namespace gpuclean::convert
