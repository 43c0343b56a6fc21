#pragma once
// `gpuclean lint`: static GPU compatibility of a model against a versioned
// compatibility matrix (data/compat/<target>.json, docs/lint.md), plus a
// prediction of the delegate's residency (nodes on the GPU, partitions).
//
// The matrix says what a runtime does with an op under given constraints;
// the structural rules (src/lint/rules/) recognise multi-node patterns and
// take their verdict, evidence and thresholds from the same matrix. A rule a
// target's matrix does not mention does not run for that target: no
// evidence, no finding.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gpuclean/ir.h"
#include "gpuclean/precision.h"

namespace gpuclean::lint {

// What a runtime does with a node.
enum class Status {
  kDelegated,  // runs on the accelerator
  kPartial,    // runs on the accelerator in some configurations only
  kFallback,   // the delegate declines it quietly; it runs on the CPU
  kRejected,   // the delegate declines it; a strict GPU compile fails
  kIncorrect,  // runs on the accelerator, gives wrong numbers
  kUnknown,    // no matrix entry: not measured, not documented
};
std::string_view StatusName(Status status);
std::optional<Status> ParseStatus(std::string_view name);
// Whether a node with this status runs inside a delegate partition.
bool RunsOnAccelerator(Status status);

enum class Severity { kInfo, kWarning, kError };
std::string_view SeverityName(Severity severity);

// Where a fact came from. Only `measured` may claim a run on a real runtime here.
inline constexpr const char* kProvenances[] = {"measured", "source", "reference-doc", "upstream-issue", "inferred"};

struct Evidence {
  std::string date;
  std::string runtime;
  std::string source;  // document section, upstream issue, or probe
};

// One matrix entry (op + constraints -> verdict), or the configuration of one
// structural rule (rule id -> verdict and parameters).
struct Entry {
  std::string id;
  std::string op;                                  // builtin name ("CONV_2D"), custom code, or "*" for every op
  nlohmann::json when = nlohmann::json::object();  // constraints, docs/lint.md
  Status status = Status::kUnknown;
  std::string provenance;
  Evidence evidence;
  std::string why;
  std::string consequence;         // "rejected" | "partition" | "wrong-numbers" | "none"
  std::vector<std::string> hints;  // pass ids (PassCatalog)
  // The delegate absorbs the node (fp16 weight DEQUANTIZE): it is neither a
  // finding nor a node of its own in the residency count of a full delegation.
  bool folded = false;
  nlohmann::json params = nlohmann::json::object();  // rule thresholds
  // Number of constraints; most specific match wins among op entries.
  int specificity() const;
};

struct ResidencyModel {
  // Delegates in the TFLite family keep only the largest N partitions; null
  // when every supported partition is delegated.
  std::optional<int> max_delegated_partitions;
  // How the runtime words its residency line ("litert-gpu" or "tflite").
  std::string log_style = "litert-gpu";
  std::string delegate_name = "GPU";
};

// The interpreter mode that models the target's fp16 numbers (the matrix's
// "numerics" object, docs/lint.md), with where that model comes from.
struct NumericsModel {
  Precision model = Precision::kFp16Compute;
  std::string provenance;
  Evidence evidence;
  std::string why;
};

struct Matrix {
  std::string target;
  std::string description;
  std::string runtime;
  std::vector<std::string> chain;  // files read, most derived first
  std::vector<Entry> entries;      // op entries, in file order
  std::vector<Entry> rules;        // structural rule configurations
  ResidencyModel residency;
  NumericsModel numerics;
  // Fixture models whose measured residency is known to differ from the
  // prediction, with the reason (model file name -> reason).
  nlohmann::json known_mismatches = nlohmann::json::object();

  const Entry* Rule(const std::string& id) const;
};

// The folder holding compat/ (the data dir): $GPUCLEAN_DATA_DIR if set,
// else <source>/data as compiled in.
std::string DefaultDataDir();
// "361 entries: 352 source, 9 inferred": where a matrix's facts come from.
std::string ProvenanceSummary(const Matrix& matrix);
inline constexpr const char* kDefaultTarget = "mldrift-cl@2.2.0";

// "A,B" -> {"A", "B"}: the targets one file must be clean for (empty
// items dropped).
std::vector<std::string> SplitTargets(const std::string& list);

// Target ids in <data>/compat, sorted; files starting with '_' are shared
// bases, not targets.
std::vector<std::string> ListTargets(const std::string& compat_dir);
// The numeric model of a target: what `run --precision fp16`, `bisect` and
// `check` emulate for it.
Precision NumericModel(const Matrix& matrix);
// A --precision / --a / --b value: "fp16" is the target's numeric model
// (read from <compat_dir>/<target>.json; compat_dir empty: the data dir's);
// every other name parses as ParsePrecision does.
Precision ResolvePrecision(const std::string& name, const std::string& target, const std::string& compat_dir = "");

// Reads a target with its `extends` chain. Throws Error(kUsage) for an
// unknown target (listing valid ones), Error(kBadInput) for a bad file.
Matrix LoadMatrix(const std::string& compat_dir, const std::string& target);
// Problems of one matrix file read on its own (format, statuses, provenance,
// evidence, pass ids, constraint keys); empty when valid.
std::vector<std::string> ValidateMatrixFile(const std::string& path);

// Pass ids a hint may name: the rewrite catalogue (one place, docs/lint.md).
// How a pass reaches a model:
//   automatic  a rewrite `fix` and `convert` apply when a lint finding names it
//   numeric    a rewrite for fp16 numerics, not named by lint: `convert`
//              applies it when the target's arithmetic breaks the outputs,
//              `fix --passes` on request (check's bisect suggests it)
//   opt-in     a rewrite that changes the model's inputs: only by --passes
//   split      a cut into several graphs (`gpuclean split`)
//   host       a cut that moves ops to a host step between graphs
//   manual     work in the source model or exporter; no rewrite exists
enum class PassKind { kAutomatic, kNumeric, kOptIn, kSplit, kHost, kManual };
std::string_view PassKindName(PassKind kind);
bool IsRewrite(PassKind kind);  // automatic, numeric or opt-in

struct PassInfo {
  const char* id;
  PassKind kind;
  const char* summary;
};
const std::vector<PassInfo>& PassCatalog();
const PassInfo* FindPass(std::string_view id);

struct Finding {
  std::string rule;  // matrix entry id or structural rule id
  Severity severity = Severity::kInfo;
  Status status = Status::kUnknown;
  int subgraph = 0;
  int node = -1;  // -1 for whole-graph findings
  std::string op;
  std::vector<std::string> tensors;
  std::string why;
  std::string consequence;
  std::string fix_pass;            // first hint, may be empty
  std::vector<std::string> hints;  // every hint of the entry, fix_pass first
  std::string fix;                 // one line
  std::string provenance;
  Evidence evidence;
};

struct SubgraphResidency {
  int subgraph = 0;
  int nodes = 0;  // nodes the runtime counts
  // The headline counts a node the matrix has no entry for (status unknown)
  // as not delegated: nothing measured or read says the delegate takes it.
  int gpu_nodes = 0;              // nodes inside delegated partitions
  int partitions = 0;             // delegated partitions
  int all_partitions = 0;         // delegated + CPU subsets, as TFLite's log counts them
  int unknown_nodes = 0;          // nodes with status unknown
  int if_accepted_gpu_nodes = 0;  // if every unknown node were accepted
  int if_accepted_partitions = 0;
  std::vector<std::vector<int>> partition_nodes;  // node indices per delegated partition
};

struct Report {
  std::string model;
  std::string target;
  std::vector<Finding> findings;                 // sorted: severity (error first), subgraph, node
  std::vector<std::vector<Status>> node_status;  // per subgraph, per node
  std::vector<SubgraphResidency> residency;
  int count(Severity severity) const;
};

Report Lint(const ir::Model& model, const Matrix& matrix);

// Whether input `position` of `op` is a slot where the delegate expects a
// constant (conv / FC weights and bias, what DEQUANTIZE / DENSIFY read): the
// large-constant rule does not flag those, and host-fed-constants leaves them.
bool IsWeightSlot(const ir::Op& op, size_t position);

// The residency line: "predicted: N of M nodes on GPU, K partitions", and the
// runtime's own wording of the same numbers.
std::string PredictedLine(const SubgraphResidency& residency);
std::string RuntimeLogLine(const SubgraphResidency& residency, const ResidencyModel& model);

nlohmann::json ToJson(const Report& report, const Matrix& matrix);
std::string RenderText(const Report& report, const Matrix& matrix);
std::string RenderMarkdown(const Report& report, const Matrix& matrix);
nlohmann::json ToSarif(const Report& report, const Matrix& matrix);

}  // namespace gpuclean::lint
