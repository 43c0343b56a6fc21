#include "gpuclean/task_gates.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

#include "gpuclean/error.h"
#include "gpuclean/metrics.h"

namespace gpuclean::analyze {
namespace {

// Mask IoU and correlation at these levels are where segmentation and
// heatmap consumers stop noticing a difference.
constexpr double kMaskIou = 0.95;
constexpr double kMapCorrelation = 0.99;
// Regression outputs, in their own units: mean error within 1% of their
// scale (two pixels of a 224-pixel landmark range, a centimetre of a
// metre-scale world landmark), and no single value off by more than 5%.
constexpr double kRegressionMeanFraction = 0.01;
constexpr double kRegressionMaxFraction = 0.05;

struct Range {
  double lo = 0, hi = 0, max_abs = 0;
  bool any = false;
};

Range FiniteRange(const npy::Array& a) {
  Range r;
  for (double v : ToDoubles(a)) {
    if (!std::isfinite(v)) continue;
    if (!r.any) r.lo = r.hi = v;
    r.lo = std::min(r.lo, v);
    r.hi = std::max(r.hi, v);
    r.max_abs = std::max(r.max_abs, std::fabs(v));
    r.any = true;
  }
  return r;
}

std::vector<int64_t> NonUnitDims(const std::vector<int64_t>& shape) {
  std::vector<int64_t> dims;
  for (int64_t d : shape)
    if (d != 1) dims.push_back(d);
  return dims;
}

bool NameSaysScores(std::string name) {
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const char* word : {"logit", "class", "prob", "softmax", "score"})
    if (name.find(word) != std::string::npos) return true;
  return false;
}

OutputGate Gate(int output, const std::string& text, std::string why) {
  OutputGate g;
  g.output = output;
  g.spec = ParseGate(text);
  g.inferred = true;
  g.why = std::move(why);
  return g;
}

std::vector<OutputGate> InferOne(int output, const ir::Tensor& tensor, const npy::Array& ref) {
  std::vector<int64_t> shape(ref.shape.begin(), ref.shape.end());
  const std::vector<int64_t> dims = NonUnitDims(shape);
  const Range range = FiniteRange(ref);
  const std::string shown = fmt::format("[{}]", fmt::join(shape, ","));
  const bool float_output = ref.dtype == tfl::TensorType_FLOAT32 || ref.dtype == tfl::TensorType_FLOAT16;

  // [1,H,W,1] or [1,1,H,W]: rank 3 is left out, since [1,N,K] is as often
  // N anchors of K box coordinates as an H x W mask.
  const bool one_channel = shape.size() == 4 && (shape[3] == 1 || shape[1] == 1);
  if (float_output && one_channel && dims.size() == 2 && dims[0] >= 16 && dims[1] >= 16) {
    const bool probabilities = range.any && range.lo >= 0 && range.hi <= 1;
    const double threshold = probabilities ? 0.5 : 0;
    OutputGate g = Gate(output, fmt::format("iou>={}", kMaskIou),
                        fmt::format("one-channel {}x{} map {} -> mask IoU after threshold {} ({})", dims[0], dims[1],
                                    shown, threshold, probabilities ? "values in [0,1]" : "logits"));
    g.options.mask_threshold = threshold;
    return {g};
  }
  if (float_output && shape.size() == 4 && ((shape[1] >= 8 && shape[2] >= 8) || (shape[2] >= 8 && shape[3] >= 8)))
    return {Gate(output, fmt::format("corr>={}", kMapCorrelation),
                 fmt::format("multi-channel spatial map {} (heatmaps, features) -> correlation", shown))};
  if (!shape.empty() && shape.back() >= 2 && NameSaysScores(tensor.name))
    return {Gate(output, "argmax",
                 fmt::format("score vector {} named '{}' -> argmax of the last axis", shown, tensor.name))};
  if (!float_output)
    return {Gate(output, "equal", fmt::format("{} output {} -> equal", ir::DTypeName(ref.dtype), shown))};
  const double scale = std::max({1.0, range.hi - range.lo, range.max_abs});
  if (ref.num_elements() <= 4)  // a flag or a score: one value, where a mean says nothing more
    return {Gate(output, fmt::format("maxabs<={:.4g}", kRegressionMaxFraction * scale),
                 fmt::format("score or flag {} at scale {:.4g} -> within 5% of the scale", shown, scale))};
  const std::string why = fmt::format(
      "regression output {} (landmarks, boxes, scores) at scale {:.4g} -> mean abs "
      "diff within 1% and every value within 5% of the scale, in its own units",
      shown, scale);
  return {Gate(output, fmt::format("meanabs<={:.4g}", kRegressionMeanFraction * scale), why),
          Gate(output, fmt::format("maxabs<={:.4g}", kRegressionMaxFraction * scale), why)};
}

int ResolveOutput(const ir::Subgraph& g, const std::string& key) {
  const int n = static_cast<int>(g.outputs.size());
  std::string digits = key;
  if (digits.rfind("out", 0) == 0 && digits.size() > 3) digits = digits.substr(3);
  if (!digits.empty() && digits.size() < 9 && std::all_of(digits.begin(), digits.end(), ::isdigit)) {
    const int i = std::stoi(digits);
    if (i < n) return i;
  }
  for (int i = 0; i < n; ++i)
    if (g.tensors[g.outputs[i]].name == key) return i;
  throw Error(ErrorKind::kUsage, fmt::format("--gate {}:...: the model has no output '{}' (give out<i>, an index "
                                             "below {}, or an output tensor name)",
                                             key, key, n));
}

}  // namespace

std::vector<OutputGate> InferTaskGates(const ir::Subgraph& graph, const std::vector<npy::Array>& reference) {
  std::vector<OutputGate> gates;
  for (size_t i = 0; i < graph.outputs.size() && i < reference.size(); ++i)
    for (OutputGate& g : InferOne(static_cast<int>(i), graph.tensors[graph.outputs[i]], reference[i]))
      gates.push_back(std::move(g));
  return gates;
}

std::vector<OutputGate> ResolveTaskGates(const ir::Subgraph& graph, const std::vector<GateSpec>& given,
                                         const GateOptions& options, const std::vector<OutputGate>& inferred) {
  std::vector<std::vector<OutputGate>> per_output(graph.outputs.size());
  for (const GateSpec& spec : given) {
    const auto add = [&](int output) {
      OutputGate g;
      g.output = output;
      g.spec = spec;
      g.options = options;
      per_output[output].push_back(g);
    };
    if (spec.tensor.empty())
      for (size_t i = 0; i < graph.outputs.size(); ++i) add(static_cast<int>(i));
    else
      add(ResolveOutput(graph, spec.tensor));
  }
  std::vector<OutputGate> gates;
  for (size_t i = 0; i < per_output.size(); ++i) {
    if (!per_output[i].empty()) {
      gates.insert(gates.end(), per_output[i].begin(), per_output[i].end());
      continue;
    }
    for (const OutputGate& g : inferred)
      if (g.output == static_cast<int>(i)) gates.push_back(g);
  }
  return gates;
}

std::vector<OutputGateResult> ApplyTaskGates(const std::vector<OutputGate>& gates,
                                             const std::vector<npy::Array>& reference,
                                             const std::vector<npy::Array>& got) {
  std::vector<OutputGateResult> results;
  for (const OutputGate& gate : gates) {
    OutputGateResult r;
    r.gate = gate;
    r.result.gate = gate.spec.text;
    const size_t o = static_cast<size_t>(gate.output);
    if (o >= reference.size() || o >= got.size()) {
      r.result.detail = fmt::format("output {} is missing from a run", o);
      results.push_back(std::move(r));
      continue;
    }
    try {
      const Metrics metrics = Compare(reference[o], got[o]);
      r.new_nonfinite = metrics.nonfinite_got > metrics.nonfinite_ref;
      r.result = ApplyGate(gate.spec, reference[o], got[o], metrics, gate.options);
      if (r.new_nonfinite) {
        r.result.passed = false;
        r.result.detail += fmt::format("; {} non-finite values where the reference has {}", metrics.nonfinite_got,
                                       metrics.nonfinite_ref);
      }
    } catch (const Error& e) {
      r.result.passed = false;
      r.result.detail = e.what();
    }
    results.push_back(std::move(r));
  }
  return results;
}

}  // namespace gpuclean::analyze
