#pragma once
// First-divergence search: run a model twice (two numeric modes, or two
// models whose tensors share names), tap every intermediate tensor, compare
// them op by op in execution order, and name the first op whose output
// breaks while its inputs still agree - with the likely cause and the
// rewrite that fixes it.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gpuclean/exec.h"
#include "gpuclean/ir.h"
#include "gpuclean/metrics.h"

namespace gpuclean::analyze {

// One side of the comparison: a model run in a numeric mode.
struct BisectSide {
  std::shared_ptr<const ir::Model> model;
  std::string label;  // "fp32", "fp16-compute" or a file name
  exec::Precision precision = exec::Precision::kFp32;
};

struct BisectOptions {
  // A tensor diverges when its correlation drops below this, or when
  // non-finite values appear that the reference does not have.
  double min_correlation = 0.999;
  int threads = 1;
};

enum class Cause {
  kNone,
  kOverflow,              // non-finite values, or an accumulation past 65504
  kReductionExtent,       // a long reduction losing precision in half
  kLargeActivationConv,   // a conv/matmul whose outputs are large for half
  kPrecisionCompounding,  // gradual decay with depth, no single break
  kPrecisionLoss,         // a break none of the above explains
  kSelectionNearTie,      // a top-K / arg-max picked other rows: its scores tie within half's rounding
};
std::string_view CauseName(Cause cause);

// Per compared tensor, in execution order.
struct TensorDivergence {
  int op_index = -1;
  std::string op_name;
  int tensor = -1;
  std::string name;
  int depth = 0;  // longest op path from a graph input
  std::vector<int32_t> shape;
  Metrics metrics;
  bool diverged = false;
  // Integer tensors (selected indices) are compared as sets, one per row of
  // the last axis, never by correlation: diverged when a row's set differs.
  bool compared_as_sets = false;
  int64_t rows = 0, rows_differ = 0;
};

struct NonFiniteOrigin {
  int op_index = -1;
  std::string op_name;
  std::string tensor;
  int64_t count = 0;  // non-finite elements in that output
  int64_t of = 0;     // elements in that output
};

struct BisectReport {
  std::string model;
  std::string a, b;  // labels
  double min_correlation = 0;
  std::vector<TensorDivergence> tensors;
  std::vector<Metrics> outputs;  // per graph output, b against a
  // Graph output values of each run (in a's output order), for task gates
  // and for comparing other runtimes against the same reference run.
  std::vector<npy::Array> output_values_a, output_values_b;
  // Index into `tensors` of the first break, if any.
  std::optional<size_t> first_break;
  Cause cause = Cause::kNone;
  std::string why;                                  // the numbers behind the cause
  std::string fix_pass;                             // pass id from the catalog (docs/lint.md), empty if none
  std::string fix;                                  // one line
  std::optional<NonFiniteOrigin> nonfinite_origin;  // in run b
};

// `inputs` feed both runs (graph input order of a; b's inputs are matched by
// name when b is another model). Error(kBadInput) when the two models share
// no tensor names.
BisectReport Bisect(const BisectSide& a, const BisectSide& b, const std::vector<npy::Array>& inputs,
                    const BisectOptions& options = {});

nlohmann::json ToJson(const BisectReport& report);
std::string RenderText(const BisectReport& report);
// A self-contained HTML page (no network): the graph coloured by divergence,
// correlation against depth, the first break with its numbers.
std::string RenderHtml(const BisectReport& report, const ir::Subgraph& graph);
// Google Model Explorer's node data overlay (GraphNodeData JSON): per op
// output tensor name, value 1 - correlation (2 for new non-finite values),
// with thresholds colouring agreement green to red; the first break magenta.
nlohmann::json ModelExplorerOverlay(const BisectReport& report);

}  // namespace gpuclean::analyze
