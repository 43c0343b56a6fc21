#pragma once
// Graph rewrites (`gpuclean fix`, docs/rewrite.md). A pass finds a pattern
// in the main subgraph, checks its precondition at each match, rewrites the
// matches, and declares how close the result is to the original:
//
//   exact   mathematically identical; in float arithmetic the outputs agree
//           to max |a - b| <= kExactTolerance * max(1, max |a|)
//   approx  a different function within a stated relative bound
//
// Fix() never trusts the declaration: it runs the graph before and after
// every pass on seeded inputs in the interpreter and refuses the result when
// a pass exceeds its bound.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuclean/ir.h"
#include "gpuclean/lint.h"
#include "gpuclean/npy.h"
#include "gpuclean/valid_rows.h"

namespace gpuclean::rewrite {

enum class Exactness { kExact, kApprox };
std::string_view ExactnessName(Exactness exactness);  // "exact" | "approx"

inline constexpr double kExactTolerance = 1e-5;

// Choices a pass offers; the defaults are what `gpuclean fix` does.
struct PassOptions {
  // gelu-tanh: x * sigmoid(1.702 x) instead of the tanh form.
  bool gelu_sigmoid = false;
  // host-fed-constants: constants with at least this many elements feeding
  // compute ops become graph inputs.
  int64_t host_fed_min_elements = 65536;
  // gather-onehot-matmul: the most table rows (gathered entries) a GATHER /
  // GATHER_ND may index to become a one-hot matmul; the one-hot tensor and
  // the matmul grow with it, and embedding tables far past this belong on
  // the host.
  int64_t onehot_max_rows = 1024;
  // bmm-split-rows: the most rows (product of all dimensions but the last)
  // a BATCH_MATMUL's second operand may hold; the WebGPU backend's measured
  // edge (data/compat/mldrift-webgpu@2.5.3.json, bmm-rhs-rows).
  int64_t bmm_max_rhs_rows = 32768;
};

// One place a pass rewrote.
struct Site {
  int node = -1;     // op index in the graph the pass was given
  std::string op;    // that op's name ("TRANSPOSE_CONV")
  std::string what;  // one line: what replaced it
};

// A graph input a pass added whose value the host must feed: a baked
// constant moved out of the file, or the `one` of add-output-alias. `fix`
// writes each beside the model as <OUT stem>.<name>.npy.
struct HostInput {
  std::string name;  // the new graph input's tensor name
  npy::Array value;
};

// A match a pass looked at and left alone: which precondition failed there.
// Fix() quotes it for a lint error that is still there after the fix.
struct Skip {
  int node = -1;                     // op index in the graph the pass was given
  std::string op;                    // that op's name
  std::vector<std::string> tensors;  // names of the tensors the match covers
  std::string why;                   // one line: the precondition that failed
};

struct PassResult {
  std::vector<Site> sites;  // empty: nothing matched (the model is unchanged)
  std::vector<HostInput> host_inputs;
  std::vector<Skip> skipped;  // optional: matches left alone, with why
};

class Pass {
 public:
  virtual ~Pass() = default;
  // An id of lint::PassCatalog() ("gelu-tanh").
  virtual std::string_view id() const = 0;
  virtual Exactness exactness() const = 0;
  // Relative bound on max |original - rewritten| (times max(1, max|original|))
  // that Fix() enforces with these options; kExactTolerance for exact passes.
  virtual double bound(const PassOptions&) const { return kExactTolerance; }
  // One line: the precondition and, for approx passes, where the bound comes from.
  virtual std::string_view contract() const = 0;
  // Opt-in passes run only when named in --passes, never from lint's hints
  // (they change the model's interface, e.g. add inputs).
  virtual bool opt_in() const { return false; }
  // Rewrites every match in model.main(). Leaves a valid model (Validate()
  // passes) with the same outputs in the same order; may add graph inputs
  // only as HostInputs.
  virtual PassResult Apply(ir::Model& model, const PassOptions& options) const = 0;
};

// Every pass, in the order Fix() applies them.
const std::vector<const Pass*>& Registry();
const Pass* FindPass(std::string_view id);  // nullptr when not implemented

// ------------------------------------------------------------------ fix

struct ReferenceOutputs {
  std::vector<std::vector<npy::Array>> outputs;  // per proof input set
};

struct FixOptions {
  std::string target = lint::kDefaultTarget;
  std::string data_dir;  // holds compat/; empty: lint::DefaultDataDir()
  // Empty: every implemented, not opt-in pass that a lint finding names.
  std::vector<std::string> passes;
  PassOptions pass_options;
  uint32_t seed = 0;
  // Passes outside the registry (an embedder's own), applied and proven
  // after the chosen ones.
  std::vector<const Pass*> extra_passes;
  // Interpreter threads for the proof runs.
  int threads = 1;
  // Prove the applied chain once against the original, within the sum of
  // its passes' bounds (two runs instead of two per pass); the passes are
  // proven one by one only when that fails, so the failure names one.
  // convert uses it: its onnxruntime proof of the result follows anyway.
  bool prove_as_chain = false;
  // With prove_as_chain: the chain is compared with the original on the
  // first this many input sets (0: all); the rewritten model still runs on
  // every set (its outputs are FixResult::outputs). convert passes 1: its
  // onnxruntime proof of the result covers every set, and the original's
  // run on the others was a sixth of a 1024x1024 convert.
  int chain_sets = 0;
  // Off: apply and lint only (to choose options before the proven fix);
  // the result is never proven.
  bool prove = true;
  // The proof's input sets, one array per graph input of the model, in
  // order; empty: ProofInputs(seed).
  std::vector<std::vector<npy::Array>> inputs;
  // The original model's outputs on the proof inputs (a set left empty is
  // run and filled in), shared by Fix calls on the same model and inputs.
  std::shared_ptr<ReferenceOutputs> reference;
};

// The numeric proof of one pass (or of the whole fix) on one output.
struct OutputDelta {
  std::string output;       // output tensor name
  double max_abs_diff = 0;  // over elements where the original is not NaN
  double max_abs_ref = 0;
  double allowed = 0;  // bound * max(1, max_abs_ref)
  // A selection's padded output (detections after NMS) whose rows only
  // moved as near-ties - in another order, or another box of the same
  // object at a tied score - paired one to one: how. It then holds
  // whatever its diff by position.
  std::string paired;
  bool holds() const { return max_abs_diff <= allowed || !paired.empty(); }
};

struct PassOutcome {
  std::string id;
  Exactness exactness = Exactness::kExact;
  double bound = kExactTolerance;
  std::vector<Site> sites;
  std::vector<OutputDelta> deltas;  // worst over the input sets, per output
  bool proven = false;              // applied and within bound (false when no site)
  std::string failure;              // one line when not proven and sites exist
};

// Why an error-level lint finding is still there after the fix.
enum class RemainingCause {
  kNoPass,        // no rewrite exists for it (lint names none, or one not implemented)
  kPrecondition,  // a pass exists but its precondition failed at this op
  kSplitOrHost,   // it needs gpuclean split or a host step (split-graph, gather-to-host)
  kOptIn,         // the pass is opt-in: it changes the model's inputs
  kNotChosen,     // --passes left the pass out
};
std::string_view RemainingCauseName(RemainingCause cause);  // "no-pass", "precondition", ...

struct Remaining {
  lint::Finding finding;  // as in FixResult::after (node indices of FixResult::model)
  RemainingCause cause = RemainingCause::kNoPass;
  std::string pass;  // the pass concerned; empty for kNoPass without a named rewrite
  std::string why;   // one line
};

struct FixResult {
  ir::Model model;  // the rewritten model (write it only when proven)
  std::vector<HostInput> host_inputs;
  lint::Report before, after;
  std::vector<PassOutcome> passes;  // in the order applied
  // Passes lint suggested that Fix() cannot apply (not implemented, opt-in,
  // or manual work such as split-graph), with why.
  std::vector<std::string> not_applied;
  // Error-level findings of `after`, each with why no pass removed it.
  std::vector<Remaining> remaining;
  std::vector<OutputDelta> total;  // original vs final model
  // The final model's outputs on each proof input set; empty when no pass
  // changed anything (nothing ran) or nothing was proven.
  std::vector<std::vector<npy::Array>> outputs;
  // Every applied pass is proven and the chain added no lint error.
  bool proven = false;
  // proven and no error-level finding remains: the model is fixed.
  bool ok = false;
  std::string failure;  // one line when !ok
  int changed_sites() const;
};

// Applies and proves. Throws Error(kUsage) for an unknown pass id and
// Error(kUnsupported) when the interpreter cannot run the model.
FixResult Fix(const ir::Model& model, const FixOptions& options);

// One file for several delegates: Fix for each target in turn on the result
// of the previous ones, in rounds until a whole round changes nothing (at
// most three). `final` is every target's Fix of the final model (nothing
// left to change: its lint is that target's verdict); `model` and
// `host_inputs` are the final model and every host input the rounds added.
struct TargetsFixResult {
  ir::Model model;
  std::vector<HostInput> host_inputs;
  std::vector<std::pair<std::string, FixResult>> steps;  // target, result, in the order run
  std::vector<std::pair<std::string, FixResult>> final;  // one per target
  bool proven = false;                                   // every step proven
  bool ok = false;                                       // proven and no target has an error left
  // The final model as one FixResult (the first target's verdict) for WriteResult.
  FixResult AsFixResult() const;
};
// `options.target` is ignored; `targets` are data/compat ids.
TargetsFixResult FixForTargets(const ir::Model& model, const FixOptions& options,
                               const std::vector<std::string>& targets);

// Writes result.model to `path` atomically, and each host input beside it as
// <path minus .tflite>.<input name, '/' -> '_'>.npy. Refuses to overwrite the
// model's source file unless `in_place`, and a result that is not proven
// (callers decide whether a proven result with remaining errors is written).
// Returns the files written.
std::vector<std::string> WriteResult(const FixResult& result, const std::string& path, bool in_place);

// Where WriteResult puts host input `name` of a model written to `model_path`.
std::string HostInputPath(const std::string& model_path, const std::string& name);

nlohmann::json ToJson(const FixResult& result);
std::string RenderText(const FixResult& result, const lint::Matrix& matrix);

// The input sets every proof runs on: graph inputs by name, values from
// exec::GenerateInput(seed) (uniform [0,1)) and, for float inputs, a second
// set uniform in [-4, 4) from seed + 1, so sign-dependent patterns are
// exercised. Host inputs are fed their values.
std::vector<std::vector<npy::Array>> ProofInputs(const ir::Subgraph& graph, uint32_t seed,
                                                 const std::vector<HostInput>& host_inputs);

// max |a - b| per output over elements where `a` is not NaN; an element where
// `a` is finite and `b` is not counts as infinite. `padded` outputs (the
// model's valid_rows) are cut to their counts first, and a selection's rows
// that only moved as near-ties are paired (OutputDelta::paired).
std::vector<OutputDelta> Deltas(const ir::Subgraph& graph, std::vector<npy::Array> a, std::vector<npy::Array> b,
                                double bound, const std::vector<PaddedOutput>& padded = {});

}  // namespace gpuclean::rewrite
