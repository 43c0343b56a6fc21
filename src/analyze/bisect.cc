#include "gpuclean/bisect.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>

#include "gpuclean/error.h"
#include "gpuclean/half.h"
#include "gpuclean/op_table.h"
#include "gpuclean/run.h"

namespace gpuclean::analyze {
namespace {

// A dot product or conv whose outputs pass this loses a unit of precision
// per element in half (spacing 2 above 2048) and usually grows further.
constexpr double kLargeActivation = 2048;
// A reduction over more elements than this stalls in a half accumulator
// (four lanes of 1024 ones already sit at the 2048 spacing limit).
constexpr int64_t kLongReduction = 4096;

struct Taps {
  std::vector<std::pair<int, int>> order;  // (op, tensor) in execution order
  std::unordered_map<int, npy::Array> values;
};

Taps RunWithTaps(const BisectSide& side, const std::vector<npy::Array>& inputs, const std::vector<int>& input_slots,
                 int threads) {
  exec::Interpreter interpreter(side.model, {.threads = threads, .precision = side.precision});
  for (size_t i = 0; i < input_slots.size(); ++i) interpreter.SetInput(input_slots[i], inputs[i]);
  Taps taps;
  interpreter.Invoke([&](int op, int tensor, const exec::Tensor& value) {
    taps.order.emplace_back(op, tensor);
    taps.values[tensor] = exec::ToArray(value);
  });
  return taps;
}

std::vector<int> LongestPathDepth(const ir::Subgraph& g) {
  std::vector<int> depth(g.tensors.size(), 0);
  for (int i : g.TopologicalOrder()) {
    int d = 0;
    for (int32_t t : g.ops[i].inputs)
      if (t >= 0) d = std::max(d, depth[t]);
    for (int32_t t : g.ops[i].outputs) depth[t] = d + 1;
  }
  return depth;
}

// Where correlation is undefined (a constant side, a single element), a
// relative error beyond this counts as a divergence.
constexpr double kMaxRelativeErrorWithoutCorrelation = 0.05;

// Differences below binary16's smallest normal are underflow, not a break.
constexpr double kUnderflow = 6.103515625e-05;

// Whether the reference's values spread over more than a few binary16
// steps at their magnitude. Per-row statistics of normalised data (the row
// means of x/S in SafeLayerNorm, row maxima ~460 that differ by less than
// one half step) are nearly constant: any rounding then moves their
// correlation far from 1 while the values agree to 1e-4. For those, a
// correlation below the threshold counts only with a large relative error.
bool SpreadResolvable(const npy::Array& ref) {
  if (ref.dtype != tfl::TensorType_FLOAT32 || ref.num_elements() < 2) return true;
  const float* v = ref.as<float>();
  double sum = 0, sq = 0, amax = 0;
  int64_t n = 0;
  for (int64_t i = 0; i < ref.num_elements(); ++i) {
    if (!std::isfinite(v[i])) continue;
    sum += v[i];
    sq += double(v[i]) * v[i];
    amax = std::max(amax, std::fabs(double(v[i])));
    ++n;
  }
  if (n < 2) return true;
  const double mean = sum / n, stddev = std::sqrt(std::max(0.0, sq / n - mean * mean));
  return stddev >= 8 * amax * std::ldexp(1.0, -10);  // 8 half steps
}

bool Diverged(const Metrics& m, double min_correlation, bool resolvable = true) {
  if (m.nonfinite_got > m.nonfinite_ref) return true;
  if (m.count == 0 || m.count == m.nonfinite_ref || m.max_abs_diff <= kUnderflow) return false;
  if (std::isnan(m.correlation)) return !(m.relative_error <= kMaxRelativeErrorWithoutCorrelation);
  // Low spread: a poor correlation alone is rounding noise; it takes a large
  // relative error too. (Never flags a tensor the correlation accepts.)
  if (!resolvable && m.correlation < min_correlation) return !(m.relative_error <= kMaxRelativeErrorWithoutCorrelation);
  return m.correlation < min_correlation;
}

bool IsOp(const ir::Op& op, std::initializer_list<tfl::BuiltinOperator> codes) {
  return std::find(codes.begin(), codes.end(), op.code) != codes.end();
}

bool IsDotProduct(const ir::Op& op) {
  return ir::IsDotProduct(op.code) ||
         (op.code == tfl::BuiltinOperator_CUSTOM && op.custom_code == "Convolution2DTransposeBias");
}

bool IsReduction(const ir::Op& op) { return ir::Accumulates(op.code); }

bool IsSquare(const ir::Subgraph& g, int tensor) {
  const int p = g.Producer(tensor);
  if (p < 0) return false;
  const ir::Op& op = g.ops[p];
  if (IsOp(op, {tfl::BuiltinOperator_SQUARE, tfl::BuiltinOperator_SQUARED_DIFFERENCE, tfl::BuiltinOperator_POW}))
    return true;
  return op.code == tfl::BuiltinOperator_MUL && op.inputs.size() == 2 && op.inputs[0] == op.inputs[1];
}

// x - mean(x): the centred input of a LayerNorm variance.
bool IsCentred(const ir::Subgraph& g, int tensor) {
  const int p = g.Producer(tensor);
  if (p < 0) return false;
  const ir::Op& op = g.ops[p];
  if (op.code == tfl::BuiltinOperator_SQUARED_DIFFERENCE) return true;
  for (int32_t t : op.inputs) {
    const int q = t >= 0 ? g.Producer(t) : -1;
    if (q >= 0 && g.ops[q].code == tfl::BuiltinOperator_SUB) return true;
  }
  return false;
}

// Whether a normalisation (a MEAN, or an L2 norm) consumes `tensor` within a
// few ops: then scaling the producing weights down is exact.
bool NormFollows(const ir::Subgraph& g, const std::vector<std::vector<int>>& consumers, int tensor, int hops = 4) {
  if (hops == 0) return false;
  for (int c : consumers[tensor]) {
    const ir::Op& op = g.ops[c];
    if (IsOp(op, {tfl::BuiltinOperator_MEAN, tfl::BuiltinOperator_L2_NORMALIZATION})) return true;
    for (int32_t t : op.outputs)
      if (NormFollows(g, consumers, t, hops - 1)) return true;
  }
  return false;
}

int64_t ReducedExtent(const ir::Op& op, const Taps& a, const ir::Subgraph& g) {
  auto elements = [&](int t) -> int64_t {
    auto it = a.values.find(t);
    if (it != a.values.end()) return it->second.num_elements();
    return g.tensors[t].num_elements();
  };
  const int in = op.inputs.empty() ? -1 : op.inputs[0];
  if (in < 0) return 0;
  const auto& shape = g.tensors[in].shape;
  switch (op.code) {
    case tfl::BuiltinOperator_MEAN:
    case tfl::BuiltinOperator_SUM:
    case tfl::BuiltinOperator_REDUCE_PROD: {
      const int64_t out = std::max<int64_t>(1, elements(op.outputs[0]));
      return elements(in) / out;
    }
    case tfl::BuiltinOperator_FULLY_CONNECTED:
      return op.inputs.size() > 1 && g.tensors[op.inputs[1]].rank() == 2 ? g.tensors[op.inputs[1]].shape[1] : 0;
    case tfl::BuiltinOperator_AVERAGE_POOL_2D:
      if (const auto* o = op.options.AsPool2DOptions()) return static_cast<int64_t>(o->filter_height) * o->filter_width;
      return 0;
    case tfl::BuiltinOperator_CONV_2D:
      if (op.inputs.size() > 1 && g.tensors[op.inputs[1]].rank() == 4) {
        const auto& w = g.tensors[op.inputs[1]].shape;
        return static_cast<int64_t>(w[1]) * w[2] * w[3];
      }
      return 0;
    default: return shape.empty() ? 1 : shape.back();
  }
}

bool IsMultiAxisReduce(const ir::Op& op, const ir::Subgraph& g) {
  if (!IsOp(op, {tfl::BuiltinOperator_MEAN, tfl::BuiltinOperator_SUM}) || op.inputs.size() < 2) return false;
  const ir::Tensor& axes = g.tensors[op.inputs[1]];
  return axes.num_elements() > 1;
}

// A conv/matmul a few ops upstream of `op` (through the norm's own
// elementwise ops and reductions) whose reference outputs pass
// kLargeActivation; -1 if none. A norm that overflows on such values is
// fixed by scaling the conv down, not by rewriting the norm.
int LargeDotProductUpstream(const ir::Subgraph& g, const Taps& a, const ir::Op& op, int hops = 3) {
  if (hops == 0) return -1;
  for (int32_t t : op.inputs) {
    const int p = t >= 0 ? g.Producer(t) : -1;
    if (p < 0) continue;
    const ir::Op& q = g.ops[p];
    if (IsDotProduct(q)) {
      auto it = a.values.find(q.outputs[0]);
      if (it == a.values.end() || it->second.dtype != tfl::TensorType_FLOAT32) continue;
      const float* v = it->second.as<float>();
      double amax = 0;
      for (int64_t i = 0; i < it->second.num_elements(); ++i) amax = std::max(amax, std::fabs(double(v[i])));
      if (amax > kLargeActivation) return p;
      continue;
    }
    if (const int r = LargeDotProductUpstream(g, a, q, hops - 1); r >= 0) return r;
  }
  return -1;
}

// An elementwise op that scales a reduction's result back up (SafeLayerNorm
// v1's var * S * S): a MEAN/SUM within two MULs upstream.
bool RescalesReduction(const ir::Subgraph& g, const ir::Op& op, int hops = 2) {
  if (hops == 0 || op.code != tfl::BuiltinOperator_MUL) return false;
  for (int32_t t : op.inputs) {
    const int p = t >= 0 ? g.Producer(t) : -1;
    if (p < 0) continue;
    if (IsOp(g.ops[p], {tfl::BuiltinOperator_MEAN, tfl::BuiltinOperator_SUM})) return true;
    if (RescalesReduction(g, g.ops[p], hops - 1)) return true;
  }
  return false;
}

std::string Pct(int64_t part, int64_t whole) { return whole > 0 ? fmt::format("{}/{}", part, whole) : "0"; }

void SetFix(BisectReport& report, const char* pass, const char* why) {
  report.fix_pass = pass;
  report.fix = why;
}

constexpr const char* kScaleInvariantFix =
    "scale this op's weights and bias down; the following norm is scale-invariant, so it is exact";
constexpr const char* kHybridFix = "keep this op on the CPU (hybrid placement)";

bool IsIndexTensor(const npy::Array& a) { return a.dtype == tfl::TensorType_INT32 || a.dtype == tfl::TensorType_INT64; }

// Per row of the last axis, the values as a set: a selection that lists
// the same rows in another order is the same selection.
void CompareAsSets(const npy::Array& a, const npy::Array& b, TensorDivergence& d) {
  d.compared_as_sets = true;
  const int64_t n = a.num_elements();
  const int64_t width = a.shape.empty() ? 1 : std::max<int64_t>(1, a.shape.back());
  auto value = [](const npy::Array& x, int64_t i) -> int64_t {
    return x.dtype == tfl::TensorType_INT64 ? x.as<int64_t>()[i] : x.as<int32_t>()[i];
  };
  for (int64_t row = 0; row * width < n; ++row) {
    std::vector<int64_t> sa, sb;
    for (int64_t c = 0; c < width && row * width + c < n; ++c) {
      sa.push_back(value(a, row * width + c));
      sb.push_back(value(b, row * width + c));
    }
    std::sort(sa.begin(), sa.end());
    std::sort(sb.begin(), sb.end());
    ++d.rows;
    d.rows_differ += sa != sb;
  }
  d.metrics.count = n;
  d.diverged = d.rows_differ > 0;
}

// Sets report.cause, why, fix_pass and fix from the first break.
void Classify(const ir::Subgraph& g, const Taps& a, BisectReport& report, double min_correlation) {
  const TensorDivergence& brk = report.tensors[*report.first_break];
  if (brk.compared_as_sets) {
    report.cause = Cause::kSelectionNearTie;
    report.why = fmt::format(
        "{} of {} row(s) select a different set of indices: scores that tie within half precision's rounding "
        "swap places at the selection boundary. The rows that flow on are other, equally valid choices, not "
        "wrong numbers; judge the outputs by their task (detections paired by box)",
        brk.rows_differ, brk.rows);
    report.fix_pass = "cpu-island";
    report.fix =
        "keep the selection and the scores it reads in fp32: convert --host-ops auto puts the selection in a CPU "
        "graph; gate with pipeline prove --boxes so swapped near-ties are paired, not failed";
    return;
  }
  const ir::Op& op = g.ops[brk.op_index];
  const Metrics& m = brk.metrics;
  const int64_t extent = ReducedExtent(op, a, g);
  const int in0 = op.inputs.empty() ? -1 : op.inputs[0];
  const std::vector<std::vector<int>> consumers = g.Consumers();

  // The largest running sum the op's accumulators see, from the reference.
  double accumulated = m.max_abs_ref;
  if (op.code == tfl::BuiltinOperator_MEAN) accumulated = m.max_abs_ref * static_cast<double>(extent);
  if (op.code == tfl::BuiltinOperator_L2_NORMALIZATION && in0 >= 0 && a.values.count(in0)) {
    const npy::Array& x = a.values.at(in0);
    const float* v = reinterpret_cast<const float*>(x.data.data());
    const int64_t depth = std::max<int64_t>(1, extent);
    for (int64_t r = 0; r * depth < x.num_elements(); ++r) {
      double s = 0;
      for (int64_t c = 0; c < depth; ++c) s += double(v[r * depth + c]) * v[r * depth + c];
      accumulated = std::max(accumulated, s);
    }
  }

  // Error growth across the op: compounding when its inputs had already
  // drifted and the op only adds a little.
  double input_error = 0, input_correlation = 1;
  for (int32_t t : op.inputs)
    for (const TensorDivergence& d : report.tensors)
      if (d.tensor == t) {
        if (std::isfinite(d.metrics.relative_error)) input_error = std::max(input_error, d.metrics.relative_error);
        if (std::isfinite(d.metrics.correlation))
          input_correlation = std::min(input_correlation, d.metrics.correlation);
      }

  const bool nonfinite = m.nonfinite_got > m.nonfinite_ref;
  if (nonfinite || accumulated > kHalfMax || m.max_abs_ref > kHalfMax) {
    report.cause = Cause::kOverflow;
    report.why = nonfinite ? fmt::format("{} non-finite values appear in {} where {} has {}",
                                         Pct(m.nonfinite_got, m.count), report.b, report.a, m.nonfinite_ref)
                           : "";
    if (accumulated > kHalfMax)
      report.why +=
          fmt::format("{}the accumulation reaches |{:.6g}| > 65504 (half max){}", report.why.empty() ? "" : "; ",
                      accumulated, extent > 1 ? fmt::format(" over {} elements", extent) : "");
    else if (m.max_abs_ref > kHalfMax)
      report.why +=
          fmt::format("{}values reach |{:.6g}| > 65504 in {}", report.why.empty() ? "" : "; ", m.max_abs_ref, report.a);
    // A norm overflowing on a large conv's outputs (conv ~5000 then
    // InstanceNorm): the conv is the cause, scaling it down the exact fix.
    const bool in_norm =
        IsOp(op, {tfl::BuiltinOperator_MEAN, tfl::BuiltinOperator_SUM}) || NormFollows(g, consumers, brk.tensor);
    if (const int conv = in_norm ? LargeDotProductUpstream(g, a, op) : -1; conv >= 0) {
      report.cause = Cause::kLargeActivationConv;
      report.why += fmt::format("; the norm is fed by op {} ({}) whose outputs exceed {} in {}", conv,
                                g.ops[conv].name(), kLargeActivation, report.a);
      SetFix(report, "conv-weight-scale", kScaleInvariantFix);
      return;
    }
    if (IsOp(op, {tfl::BuiltinOperator_MEAN, tfl::BuiltinOperator_SUM, tfl::BuiltinOperator_L2_NORMALIZATION})) {
      if (in0 >= 0 && IsSquare(g, in0) && !IsCentred(g, in0)) {
        SetFix(report, "rmsnorm-scale-first",
               "scale x down (x/64) before squaring; the norm is scale-invariant, so the result is exact");
      } else if (op.code == tfl::BuiltinOperator_L2_NORMALIZATION) {
        SetFix(report, "rmsnorm-scale-first", "scale the input down before the L2 norm (scale-invariant: exact)");
      } else {
        SetFix(report, "safe-layernorm-v2",
               "normalise each row by S = max(1, amax/8) before the mean and variance (SafeLayerNorm v2), exact");
      }
    } else if (IsDotProduct(op) && NormFollows(g, consumers, brk.tensor)) {
      SetFix(report, "conv-weight-scale", kScaleInvariantFix);
    } else if (IsSquare(g, brk.tensor) && IsCentred(g, brk.tensor)) {
      // (x - mean)^2: a LayerNorm variance, not an RMSNorm.
      SetFix(report, "safe-layernorm-v2",
             "normalise each row by S = max(1, amax/8) before the mean and variance (SafeLayerNorm v2), exact");
    } else if (IsSquare(g, brk.tensor)) {
      SetFix(report, "rmsnorm-scale-first", "scale x down before squaring (x/64)");
    } else if (RescalesReduction(g, op)) {
      // var * S^2 rebuilt after a scaled-down LayerNorm (SafeLayerNorm v1).
      SetFix(report, "safe-layernorm-v2",
             "stay in the scaled domain: normalise x/S and never rebuild var * S^2 (SafeLayerNorm v2)");
    } else {
      SetFix(report, "split-graph", "keep this op on the CPU (hybrid placement): split the graph around it");
    }
    return;
  }
  if (IsReduction(op) && extent >= kLongReduction) {
    report.cause = Cause::kReductionExtent;
    report.why = fmt::format("the op reduces {} elements per output in a half accumulator", extent);
    if (IsMultiAxisReduce(op, g)) {
      SetFix(report, "mean-split-axes", "reduce one axis at a time (mean(3).mean(2)) or use AVERAGE_POOL_2D");
    } else {
      SetFix(report, "split-graph", "keep reductions over one small axis, or run this op on the CPU");
    }
    return;
  }
  if (IsDotProduct(op) && m.max_abs_ref > kLargeActivation) {
    report.cause = Cause::kLargeActivationConv;
    report.why = fmt::format("outputs reach |{:.6g}| where half precision spacing is {:.3g}", m.max_abs_ref,
                             std::ldexp(1.0, static_cast<int>(std::floor(std::log2(m.max_abs_ref))) - 10));
    if (NormFollows(g, consumers, brk.tensor)) {
      SetFix(report, "conv-weight-scale", kScaleInvariantFix);
    } else {
      SetFix(report, "split-graph", kHybridFix);
    }
    return;
  }
  if (input_correlation < 0.9999 && input_error > 0 && m.relative_error < 4 * input_error) {
    report.cause = Cause::kPrecisionCompounding;
    report.why = fmt::format(
        "inputs had already drifted (correlation {:.6f}, relative error {:.3g}); this op adds "
        "little (relative error {:.3g}) - no single op breaks",
        input_correlation, input_error, m.relative_error);
    SetFix(report, "split-graph", "no overflow patch helps; keep the deep block on the CPU (hybrid split)");
    return;
  }
  report.cause = Cause::kPrecisionLoss;
  report.why = std::isnan(m.correlation)
                   ? fmt::format(
                         "relative error {:.3g} at this op (too few distinct values for a correlation) "
                         "with inputs at correlation {:.6f}",
                         m.relative_error, input_correlation)
                   : fmt::format("correlation falls to {:.6f} (threshold {}) at this op with inputs at {:.6f}",
                                 m.correlation, min_correlation, input_correlation);
  SetFix(report, "split-graph", kHybridFix);
}

}  // namespace

std::string_view CauseName(Cause cause) {
  switch (cause) {
    case Cause::kNone: return "none";
    case Cause::kOverflow: return "overflow";
    case Cause::kReductionExtent: return "reduction-extent";
    case Cause::kLargeActivationConv: return "large-activation-conv";
    case Cause::kPrecisionCompounding: return "precision-compounding";
    case Cause::kPrecisionLoss: return "precision-loss";
    case Cause::kSelectionNearTie: return "selection-near-tie";
  }
  return "unknown";
}

BisectReport Bisect(const BisectSide& a, const BisectSide& b, const std::vector<npy::Array>& inputs,
                    const BisectOptions& options) {
  const ir::Subgraph& ga = a.model->main();
  const ir::Subgraph& gb = b.model->main();
  const bool same_model = a.model == b.model;
  if (inputs.size() != ga.inputs.size())
    throw Error(ErrorKind::kBadInput,
                fmt::format("the model has {} inputs, {} were given", ga.inputs.size(), inputs.size()));

  std::vector<int> slots_a(inputs.size()), slots_b(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    slots_a[i] = static_cast<int>(i);
    slots_b[i] = same_model ? static_cast<int>(i) : exec::ResolveInputKey(gb, ga.tensors[ga.inputs[i]].name);
  }
  const Taps ta = RunWithTaps(a, inputs, slots_a, options.threads);
  const Taps tb = RunWithTaps(b, inputs, slots_b, options.threads);

  std::unordered_map<std::string, int> b_by_name;
  if (!same_model)
    for (const auto& [op, t] : tb.order) b_by_name.emplace(gb.tensors[t].name, t);

  BisectReport report;
  report.a = a.label;
  report.b = b.label;
  report.min_correlation = options.min_correlation;
  const std::vector<int> depth = LongestPathDepth(ga);
  std::unordered_map<int, size_t> record_of;
  for (const auto& [op, t] : ta.order) {
    int other = t;
    if (!same_model) {
      auto it = b_by_name.find(ga.tensors[t].name);
      if (it == b_by_name.end()) continue;
      other = it->second;
    }
    auto vb = tb.values.find(other);
    if (vb == tb.values.end()) continue;
    const npy::Array& va = ta.values.at(t);
    if (va.num_elements() != vb->second.num_elements()) continue;
    TensorDivergence d;
    d.op_index = op;
    d.op_name = ga.ops[op].name();
    d.tensor = t;
    d.name = ga.tensors[t].name;
    d.depth = depth[t];
    d.shape.assign(va.shape.begin(), va.shape.end());
    if (IsIndexTensor(va) && va.dtype == vb->second.dtype) {
      CompareAsSets(va, vb->second, d);
    } else {
      d.metrics = Compare(va, vb->second);
      d.diverged = Diverged(d.metrics, options.min_correlation, SpreadResolvable(va));
    }
    record_of[t] = report.tensors.size();
    report.tensors.push_back(std::move(d));
  }
  if (!same_model && report.tensors.empty())
    throw Error(ErrorKind::kBadInput, "the two models share no intermediate tensor names; nothing to compare");

  // The first break: a diverged output whose compared inputs all agree.
  for (size_t i = 0; i < report.tensors.size() && !report.first_break; ++i) {
    const TensorDivergence& d = report.tensors[i];
    if (!d.diverged) continue;
    bool inputs_agree = true;
    for (int32_t t : ga.ops[d.op_index].inputs) {
      auto it = t >= 0 ? record_of.find(t) : record_of.end();
      if (it != record_of.end() && report.tensors[it->second].diverged) inputs_agree = false;
    }
    if (inputs_agree) report.first_break = i;
  }
  // The first op whose b output holds inf/NaN from finite inputs.
  for (const TensorDivergence& d : report.tensors) {
    if (d.metrics.nonfinite_got == 0) continue;
    bool finite_inputs = true;
    for (int32_t t : ga.ops[d.op_index].inputs) {
      auto it = t >= 0 ? record_of.find(t) : record_of.end();
      if (it != record_of.end() && report.tensors[it->second].metrics.nonfinite_got > 0) finite_inputs = false;
    }
    if (finite_inputs) {
      report.nonfinite_origin =
          NonFiniteOrigin{d.op_index, d.op_name, d.name, d.metrics.nonfinite_got, d.metrics.count};
      break;
    }
  }
  for (int32_t t : ga.outputs) {
    auto it = record_of.find(t);
    if (it == record_of.end()) continue;
    report.outputs.push_back(report.tensors[it->second].metrics);
    report.output_values_a.push_back(ta.values.at(t));
    const int other = same_model ? t : b_by_name.at(ga.tensors[t].name);
    report.output_values_b.push_back(tb.values.at(other));
  }
  if (report.first_break) Classify(ga, ta, report, options.min_correlation);
  return report;
}

nlohmann::json ToJson(const BisectReport& r) {
  nlohmann::json j;
  j["model"] = r.model;
  j["a"] = r.a;
  j["b"] = r.b;
  j["min_correlation"] = r.min_correlation;
  j["compared_tensors"] = r.tensors.size();
  j["outputs"] = nlohmann::json::array();
  for (const Metrics& m : r.outputs) j["outputs"].push_back(ToJson(m));
  if (r.first_break) {
    const TensorDivergence& d = r.tensors[*r.first_break];
    j["first_break"] = {{"op", d.op_index},
                        {"op_name", d.op_name},
                        {"tensor", d.tensor},
                        {"name", d.name},
                        {"depth", d.depth},
                        {"shape", d.shape},
                        {"metrics", ToJson(d.metrics)},
                        {"cause", CauseName(r.cause)},
                        {"why", r.why},
                        {"fix_pass", r.fix_pass},
                        {"fix", r.fix}};
  } else {
    j["first_break"] = nullptr;
  }
  if (r.nonfinite_origin)
    j["nonfinite_origin"] = {{"op", r.nonfinite_origin->op_index},
                             {"op_name", r.nonfinite_origin->op_name},
                             {"tensor", r.nonfinite_origin->tensor},
                             {"count", r.nonfinite_origin->count},
                             {"of", r.nonfinite_origin->of}};
  else
    j["nonfinite_origin"] = nullptr;
  j["tensors"] = nlohmann::json::array();
  for (const TensorDivergence& d : r.tensors)
    j["tensors"].push_back({{"op", d.op_index},
                            {"op_name", d.op_name},
                            {"tensor", d.tensor},
                            {"name", d.name},
                            {"depth", d.depth},
                            {"shape", d.shape},
                            {"diverged", d.diverged},
                            {"compared_as_sets", d.compared_as_sets},
                            {"rows_differ", d.rows_differ},
                            {"metrics", ToJson(d.metrics)}});
  return j;
}

std::string RenderText(const BisectReport& r) {
  std::string s = fmt::format(
      "bisect {}: {} vs {}, {} tensors compared (diverged: correlation < {} or new "
      "non-finite values)\n",
      r.model, r.a, r.b, r.tensors.size(), r.min_correlation);
  for (size_t i = 0; i < r.outputs.size(); ++i) {
    const Metrics& m = r.outputs[i];
    s += fmt::format("  output {}: correlation {:.6f}  max|diff| {:.4g}  max|x| {:.4g} / {:.4g}  non-finite {} / {}\n",
                     i, m.correlation, m.max_abs_diff, m.max_abs_ref, m.max_abs_got, m.nonfinite_ref, m.nonfinite_got);
  }
  if (!r.first_break) {
    s += "no op diverges: every compared tensor stays within the threshold\n";
  } else {
    const TensorDivergence& d = r.tensors[*r.first_break];
    const Metrics& m = d.metrics;
    s += fmt::format("first break: op {} ({}) -> '{}' [{}], depth {}\n", d.op_index, d.op_name, d.name,
                     fmt::join(d.shape, ","), d.depth);
    if (d.compared_as_sets)
      s += fmt::format("  indices compared as sets: {} of {} row(s) select a different set\n", d.rows_differ, d.rows);
    else
      s += fmt::format(
          "  correlation {:.6f}  cosine {:.6f}  max|diff| {:.4g}  rel.err {:.4g}  max|x| {:.4g} ({}) / "
          "{:.4g} ({})  non-finite {} / {}\n",
          m.correlation, m.cosine, m.max_abs_diff, m.relative_error, m.max_abs_ref, r.a, m.max_abs_got, r.b,
          m.nonfinite_ref, m.nonfinite_got);
    s += fmt::format("  cause: {} - {}\n", CauseName(r.cause), r.why);
    s += fmt::format("  fix:   {} - {}\n", r.fix_pass, r.fix);
  }
  if (r.nonfinite_origin)
    s += fmt::format("first non-finite values in {}: op {} ({}) -> '{}' ({} of {} elements)\n", r.b,
                     r.nonfinite_origin->op_index, r.nonfinite_origin->op_name, r.nonfinite_origin->tensor,
                     r.nonfinite_origin->count, r.nonfinite_origin->of);
  return s;
}

nlohmann::json ModelExplorerOverlay(const BisectReport& r) {
  // GraphNodeData: results keyed by output tensor name (Model Explorer matches
  // them to each node's output metadata), value 1 - correlation.
  nlohmann::json results = nlohmann::json::object();
  for (size_t i = 0; i < r.tensors.size(); ++i) {
    const TensorDivergence& d = r.tensors[i];
    const double c = d.metrics.correlation;
    double value = std::isfinite(c) ? std::clamp(1.0 - c, 0.0, 2.0) : 2.0;
    if (d.metrics.nonfinite_got > d.metrics.nonfinite_ref) value = 2.0;
    nlohmann::json entry = {{"value", value}};
    if (r.first_break && *r.first_break == i) entry["bgColor"] = "#d400ff";
    results[d.name] = entry;
  }
  return {{"results", results},
          {"thresholds",
           {{{"value", 1e-4}, {"bgColor", "#c8e6c9"}},
            {{"value", 1.0 - r.min_correlation}, {"bgColor", "#fff59d"}},
            {{"value", 0.1}, {"bgColor", "#ffb74d"}},
            {{"value", 2.0}, {"bgColor", "#e57373"}}}}};
}

}  // namespace gpuclean::analyze
