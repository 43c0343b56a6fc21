#include "gpuclean/gates.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "gpuclean/error.h"

namespace gpuclean::analyze {
namespace {

[[noreturn]] void UsageError(const std::string& message) { throw Error(ErrorKind::kUsage, message); }

// "0.999", "1e-3"; the whole text must be a finite number.
double ParseNumber(const std::string& text, const std::string& gate) {
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || !std::isfinite(value))
    UsageError(fmt::format("--gate '{}': '{}' is not a number", gate, text));
  return value;
}

constexpr const char* kGateForms =
    "corr>=X, maxabs<=X, meanabs<=X, argmax, topk=K, iou>=X, box_iou>=X, mask_iou>=X or equal, optionally NAME:GATE";

std::string Shape(const npy::Array& a) { return fmt::format("[{}]", fmt::join(a.shape, ",")); }

// Rows of the last axis: (row count, row length). A scalar is one row of one.
std::pair<int64_t, int64_t> Rows(const npy::Array& a) {
  const int64_t n = a.num_elements();
  const int64_t width = a.shape.empty() ? 1 : a.shape.back();
  return {width == 0 ? 0 : n / width, width};
}

void RequireSameRows(const npy::Array& ref, const npy::Array& got, const char* gate) {
  if (Rows(ref) != Rows(got))
    ThrowBadInput(
        fmt::format("{} gate: shapes {} and {} do not have the same rows (last axis)", gate, Shape(ref), Shape(got)));
}

// numpy's argmax: the first index of the maximum; a NaN is the maximum.
int64_t ArgmaxOfRow(const double* row, int64_t width) {
  int64_t best = 0;
  for (int64_t i = 0; i < width; ++i) {
    if (std::isnan(row[i])) return i;
    if (row[i] > row[best]) best = i;
  }
  return best;
}

// Indices of the k largest values, lower index first on ties; NaN sorts as
// the largest (consistent with ArgmaxOfRow). Returned sorted by index.
std::vector<int64_t> TopKOfRow(const double* row, int64_t width, int k) {
  std::vector<int64_t> idx(static_cast<size_t>(width));
  std::iota(idx.begin(), idx.end(), 0);
  const auto greater = [row](int64_t a, int64_t b) {
    const bool na = std::isnan(row[a]), nb = std::isnan(row[b]);
    if (na != nb) return na;
    if (!na && row[a] != row[b]) return row[a] > row[b];
    return a < b;
  };
  std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), greater);
  idx.resize(static_cast<size_t>(k));
  std::sort(idx.begin(), idx.end());
  return idx;
}

std::string Fraction(int64_t good, int64_t total) { return fmt::format("{}/{}", good, total); }

// The mask layout: (mask count, pixels per mask) after dropping trailing
// size-1 axes; the last two remaining axes are one mask.
std::pair<int64_t, int64_t> Masks(const npy::Array& a) {
  std::vector<int64_t> dims = a.shape;
  while (dims.size() > 2 && dims.back() == 1) dims.pop_back();
  int64_t pixels = 1;
  for (size_t i = dims.size() >= 2 ? dims.size() - 2 : 0; i < dims.size(); ++i) pixels *= dims[i];
  const int64_t n = a.num_elements();
  return {pixels == 0 ? 0 : n / pixels, pixels};
}

struct IouStats {
  double min = 1, mean = 1;
  int64_t worst = -1;  // index of the minimum
  int64_t count = 0;
};

void Accumulate(IouStats& s, double iou, int64_t index, double& sum) {
  // A NaN IoU (a NaN coordinate) becomes the minimum and stays it: it must fail the gate.
  if (std::isnan(s.min)) {
  } else if (s.worst < 0 || std::isnan(iou) || iou < s.min) {
    s.min = iou, s.worst = index;
  }
  sum += iou;
  ++s.count;
}

GateResult IouResult(const std::string& what, const IouStats& s, double sum, double min_iou) {
  GateResult r;
  r.gate = fmt::format("iou>={}", min_iou);
  if (s.count == 0) {
    r.passed = true;
    r.value = 1;
    r.detail = fmt::format("no {} to compare", what);
    return r;
  }
  const double mean = sum / static_cast<double>(s.count);
  r.value = s.min;
  r.passed = s.min >= min_iou;  // NaN (a NaN coordinate) fails
  r.detail = fmt::format("{0} IoU min {1:.6g} (at {0} {2}), mean {3:.6g} over {4} {0}(s)", what, s.min, s.worst, mean,
                         s.count);
  return r;
}

}  // namespace

GateSpec ParseGate(const std::string& text) {
  GateSpec spec;
  std::string gate = text;
  if (const size_t colon = gate.rfind(':'); colon != std::string::npos) {
    spec.tensor = gate.substr(0, colon);
    gate = gate.substr(colon + 1);
    if (spec.tensor.size() > 4 && spec.tensor.ends_with(".npy")) spec.tensor.resize(spec.tensor.size() - 4);
    if (spec.tensor.empty()) UsageError(fmt::format("--gate '{}': empty tensor name before ':'", text));
  }
  spec.text = gate;
  const auto after = [&](const char* prefix) -> std::optional<std::string> {
    const std::string p = prefix;
    if (gate.rfind(p, 0) == 0) return gate.substr(p.size());
    return std::nullopt;
  };
  if (auto v = after("corr>=")) {
    spec.kind = GateKind::kCorrelation;
    spec.threshold = ParseNumber(*v, text);
  } else if (auto v = after("maxabs<=")) {
    spec.kind = GateKind::kMaxAbs;
    spec.threshold = ParseNumber(*v, text);
    if (spec.threshold < 0) UsageError(fmt::format("--gate '{}': maxabs bound must not be negative", text));
  } else if (auto v = after("meanabs<=")) {
    spec.kind = GateKind::kMeanAbs;
    spec.threshold = ParseNumber(*v, text);
    if (spec.threshold < 0) UsageError(fmt::format("--gate '{}': meanabs bound must not be negative", text));
  } else if (auto v = after("box_iou>=")) {
    spec.kind = GateKind::kBoxIou;
    spec.threshold = ParseNumber(*v, text);
  } else if (auto v = after("mask_iou>=")) {
    spec.kind = GateKind::kMaskIou;
    spec.threshold = ParseNumber(*v, text);
  } else if (auto v = after("iou>=")) {
    spec.kind = GateKind::kIou;
    spec.threshold = ParseNumber(*v, text);
  } else if (auto v = after("topk=")) {
    spec.kind = GateKind::kTopK;
    const double k = ParseNumber(*v, text);
    if (k < 1 || k != std::floor(k) || k > 1e9)
      UsageError(fmt::format("--gate '{}': K must be a positive integer", text));
    spec.k = static_cast<int>(k);
  } else if (gate == "argmax") {
    spec.kind = GateKind::kArgmax;
  } else if (gate == "equal") {
    spec.kind = GateKind::kEqual;
  } else {
    UsageError(fmt::format("--gate '{}' is not a gate; expected {}", text, kGateForms));
  }
  return spec;
}

BoxFormat ParseBoxFormat(const std::string& name) {
  if (name == "xyxy") return BoxFormat::kXyxy;
  if (name == "cxcywh") return BoxFormat::kCxcywh;
  UsageError("--boxes expects xyxy or cxcywh, got '" + name + "'");
}

nlohmann::json ToJson(const GateResult& r) {
  return {{"gate", r.gate},
          {"passed", r.passed},
          {"value", std::isfinite(r.value) ? nlohmann::json(r.value) : nlohmann::json()},
          {"detail", r.detail}};
}

GateResult CorrelationGate(const Metrics& m, double min_correlation) {
  GateResult r;
  r.gate = fmt::format("corr>={}", min_correlation);
  r.value = m.correlation;
  const bool same_nonfinite = m.nonfinite_ref == m.nonfinite_got;
  r.passed = same_nonfinite && m.correlation >= min_correlation;  // NaN fails
  r.detail = fmt::format("correlation {:.6f}", m.correlation);
  if (!same_nonfinite) r.detail += fmt::format(" (non-finite: {} in REF, {} in GOT)", m.nonfinite_ref, m.nonfinite_got);
  return r;
}

namespace {

GateResult AbsDiffGate(const Metrics& m, const char* name, const char* what, double value, double bound) {
  GateResult r;
  r.gate = fmt::format("{}<={}", name, bound);
  r.value = value;
  const bool same_nonfinite = m.nonfinite_ref == m.nonfinite_got;
  r.passed = same_nonfinite && value <= bound;
  r.detail = fmt::format("{} {:.6g}", what, value);
  if (!same_nonfinite) r.detail += fmt::format(" (non-finite: {} in REF, {} in GOT)", m.nonfinite_ref, m.nonfinite_got);
  return r;
}

}  // namespace

GateResult MaxAbsGate(const Metrics& m, double max_abs_diff) {
  return AbsDiffGate(m, "maxabs", "max abs diff", m.max_abs_diff, max_abs_diff);
}

GateResult MeanAbsGate(const Metrics& m, double mean_abs_diff) {
  return AbsDiffGate(m, "meanabs", "mean abs diff", m.mean_abs_diff, mean_abs_diff);
}

bool ArgmaxNearTie(const double* ref_row, const double* got_row, int64_t width, int64_t ref_choice,
                   int64_t got_choice) {
  // In the reference the two choices are closer than twice the row's
  // measured difference on its other values (the noise of the run), and
  // within 1% of the row's scale, so either choice is as valid as the
  // numbers that made it.
  double noise = 0, scale = 1;
  for (int64_t k = 0; k < width; ++k) {
    if (k != ref_choice && k != got_choice) noise = std::max(noise, std::abs(ref_row[k] - got_row[k]));
    scale = std::max(scale, std::abs(ref_row[k]));
  }
  const double gap = ref_row[ref_choice] - ref_row[got_choice];
  return std::isfinite(gap) && gap <= std::min(2 * noise, 0.01 * scale);
}

GateResult ArgmaxGate(const npy::Array& ref, const npy::Array& got) {
  RequireSameRows(ref, got, "argmax");
  const auto [rows, width] = Rows(ref);
  const std::vector<double> a = ToDoubles(ref), b = ToDoubles(got);
  int64_t equal = 0, ties = 0, first_bad = -1, bad_a = 0, bad_b = 0;
  for (int64_t row = 0; row < rows; ++row) {
    const double* ra = a.data() + row * width;
    const double* rb = b.data() + row * width;
    const int64_t ia = ArgmaxOfRow(ra, width), ib = ArgmaxOfRow(rb, width);
    if (ia == ib) {
      ++equal;
      continue;
    }
    if (ArgmaxNearTie(ra, rb, width, ia, ib)) {
      ++ties;
    } else if (first_bad < 0) {
      first_bad = row, bad_a = ia, bad_b = ib;
    }
  }
  GateResult r;
  r.gate = "argmax";
  r.passed = equal + ties == rows;
  r.value = rows ? static_cast<double>(equal + ties) / static_cast<double>(rows) : 1.0;
  r.detail = fmt::format("argmax equal in {} rows", Fraction(equal, rows));
  if (ties > 0)
    r.detail += fmt::format(", {} swapped at near-ties (reference scores closer than the row's noise)", ties);
  if (first_bad >= 0) r.detail += fmt::format(" (first mismatch row {}: {} vs {})", first_bad, bad_a, bad_b);
  return r;
}

GateResult TopKGate(const npy::Array& ref, const npy::Array& got, int k) {
  RequireSameRows(ref, got, "topk");
  const auto [rows, width] = Rows(ref);
  if (k > width)
    ThrowBadInput(fmt::format("topk={} gate: the last axis of {} has only {} values", k, Shape(ref), width));
  const std::vector<double> a = ToDoubles(ref), b = ToDoubles(got);
  int64_t equal = 0, first_bad = -1;
  for (int64_t row = 0; row < rows; ++row) {
    if (TopKOfRow(a.data() + row * width, width, k) == TopKOfRow(b.data() + row * width, width, k))
      ++equal;
    else if (first_bad < 0)
      first_bad = row;
  }
  GateResult r;
  r.gate = fmt::format("topk={}", k);
  r.passed = equal == rows;
  r.value = rows ? static_cast<double>(equal) / static_cast<double>(rows) : 1.0;
  r.detail = fmt::format("top-{} sets equal in {} rows", k, Fraction(equal, rows));
  if (first_bad >= 0) r.detail += fmt::format(" (first mismatch row {})", first_bad);
  return r;
}

double BoxIou(const double a[4], const double b[4], BoxFormat format) {
  // To corners; a box with x2 < x1 is empty, not negative.
  const auto corners = [format](const double* v, double* c) {
    if (format == BoxFormat::kXyxy) {
      c[0] = v[0], c[1] = v[1], c[2] = v[2], c[3] = v[3];
    } else {
      c[0] = v[0] - v[2] / 2, c[1] = v[1] - v[3] / 2, c[2] = v[0] + v[2] / 2, c[3] = v[1] + v[3] / 2;
    }
  };
  for (int i = 0; i < 4; ++i)
    if (std::isnan(a[i]) || std::isnan(b[i])) return NAN;  // std::max(0.0, NaN) would hide it
  double ca[4], cb[4];
  corners(a, ca);
  corners(b, cb);
  const auto area = [](const double* c) { return std::max(0.0, c[2] - c[0]) * std::max(0.0, c[3] - c[1]); };
  const double iw = std::max(0.0, std::min(ca[2], cb[2]) - std::max(ca[0], cb[0]));
  const double ih = std::max(0.0, std::min(ca[3], cb[3]) - std::max(ca[1], cb[1]));
  const double inter = iw * ih;
  const double uni = area(ca) + area(cb) - inter;
  if (uni <= 0) return std::equal(a, a + 4, b) ? 1.0 : 0.0;  // padding rows: empty boxes that agree
  return inter / uni;
}

GateResult BoxIouGate(const npy::Array& ref, const npy::Array& got, BoxFormat format, double min_iou) {
  for (const npy::Array* t : {&ref, &got})
    if (t->shape.empty() || t->shape.back() != 4)
      ThrowBadInput(fmt::format("iou gate on boxes: shape {} does not end in an axis of 4 coordinates", Shape(*t)));
  RequireSameRows(ref, got, "iou");
  const std::vector<double> a = ToDoubles(ref), b = ToDoubles(got);
  IouStats s;
  double sum = 0;
  for (int64_t box = 0; box < Rows(ref).first; ++box) Accumulate(s, BoxIou(&a[box * 4], &b[box * 4], format), box, sum);
  return IouResult("box", s, sum, min_iou);
}

BoxMatching MatchBoxes(const npy::Array& ref, const npy::Array& got, BoxFormat format) {
  for (const npy::Array* t : {&ref, &got})
    if (t->shape.size() < 2 || t->shape.back() != 4)
      ThrowBadInput(fmt::format("box matching: shape {} is not [..., N, 4]", Shape(*t)));
  if (ref.shape != got.shape)
    ThrowBadInput(fmt::format("box matching: shapes {} and {} differ", Shape(ref), Shape(got)));
  BoxMatching m;
  m.per_set = ref.shape[ref.shape.size() - 2];
  m.sets = m.per_set == 0 ? 0 : ref.num_elements() / 4 / m.per_set;
  const std::vector<double> a = ToDoubles(ref), b = ToDoubles(got);
  m.got_index.assign(static_cast<size_t>(m.sets * m.per_set), -1);
  m.paired.assign(static_cast<size_t>(m.sets * m.per_set), false);
  struct Pair {
    double iou;
    int64_t r, g;
  };
  for (int64_t set = 0; set < m.sets; ++set) {
    const int64_t base = set * m.per_set;
    std::vector<Pair> pairs;
    for (int64_t r = 0; r < m.per_set; ++r)
      for (int64_t g = 0; g < m.per_set; ++g) {
        const double iou = BoxIou(&a[(base + r) * 4], &b[(base + g) * 4], format);
        if (iou > 0) pairs.push_back({iou, r, g});  // NaN never pairs
      }
    std::stable_sort(pairs.begin(), pairs.end(), [](const Pair& x, const Pair& y) { return x.iou > y.iou; });
    std::vector<bool> ref_used(m.per_set, false), got_used(m.per_set, false);
    for (const Pair& p : pairs) {
      if (ref_used[p.r] || got_used[p.g]) continue;
      ref_used[p.r] = got_used[p.g] = true;
      m.got_index[base + p.r] = p.g;
      m.paired[base + p.r] = p.iou >= kPairedIou;
    }
    int64_t next = 0;
    for (int64_t r = 0; r < m.per_set; ++r) {
      if (ref_used[r]) continue;
      while (got_used[next]) ++next;
      got_used[next] = true;
      m.got_index[base + r] = next;
    }
    for (int64_t r = 0; r < m.per_set; ++r) m.moved += m.got_index[base + r] != r;
  }
  for (bool p : m.paired) m.unpaired += !p;
  return m;
}

npy::Array TakeRows(const npy::Array& a, size_t axis, const std::vector<int64_t>& rows) {
  if (axis >= a.shape.size()) ThrowBadInput(fmt::format("take rows: {} has no axis {}", Shape(a), axis));
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < axis; ++d) outer *= a.shape[d];
  for (size_t d = axis + 1; d < a.shape.size(); ++d) inner *= a.shape[d];
  const int64_t n = a.shape[axis];
  const size_t row_bytes = static_cast<size_t>(inner) * (a.num_elements() ? a.data.size() / a.num_elements() : 0);
  npy::Array out = a;
  out.shape[axis] = static_cast<int64_t>(rows.size());
  out.data.clear();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t r : rows) {
      if (r < 0 || r >= n) ThrowBadInput(fmt::format("take rows: row {} outside [0, {})", r, n));
      const auto from = a.data.begin() + static_cast<long>((o * n + r) * static_cast<int64_t>(row_bytes));
      out.data.insert(out.data.end(), from, from + static_cast<long>(row_bytes));
    }
  return out;
}

npy::Array ApplyBoxMatching(const npy::Array& got, const BoxMatching& matching) {
  if (matching.sets * matching.per_set == 0) return got;
  int64_t rows = 1;
  size_t axes = 0;
  while (axes < got.shape.size() && rows < matching.sets * matching.per_set) rows *= got.shape[axes++];
  if (rows != matching.sets * matching.per_set || axes == 0 || got.shape[axes - 1] != matching.per_set)
    ThrowBadInput(fmt::format("box matching: {} does not start with {} sets of {} detections", Shape(got),
                              matching.sets, matching.per_set));
  npy::Array out = got;
  const size_t row_bytes = rows == 0 ? 0 : got.data.size() / static_cast<size_t>(rows);
  for (int64_t set = 0; set < matching.sets; ++set)
    for (int64_t r = 0; r < matching.per_set; ++r) {
      const int64_t from = set * matching.per_set + matching.got_index[set * matching.per_set + r];
      std::memcpy(out.data.data() + (set * matching.per_set + r) * row_bytes, got.data.data() + from * row_bytes,
                  row_bytes);
    }
  return out;
}

GateResult MaskIouGate(const npy::Array& ref, const npy::Array& got, double threshold, double min_iou) {
  if (Masks(ref) != Masks(got))
    ThrowBadInput(fmt::format("iou gate on masks: shapes {} and {} hold different masks", Shape(ref), Shape(got)));
  const auto [masks, pixels] = Masks(ref);
  const std::vector<double> a = ToDoubles(ref), b = ToDoubles(got);
  IouStats s;
  double sum = 0;
  for (int64_t mask = 0; mask < masks; ++mask) {
    int64_t inter = 0, uni = 0;
    for (int64_t p = mask * pixels; p < (mask + 1) * pixels; ++p) {
      const bool fa = a[p] > threshold, fb = b[p] > threshold;  // NaN is background
      inter += fa && fb;
      uni += fa || fb;
    }
    Accumulate(s, uni == 0 ? 1.0 : static_cast<double>(inter) / static_cast<double>(uni), mask, sum);
  }
  return IouResult("mask", s, sum, min_iou);
}

GateResult EqualGate(const npy::Array& ref, const npy::Array& got) {
  const std::vector<double> a = ToDoubles(ref), b = ToDoubles(got);
  int64_t equal = 0, first_bad = -1;
  for (size_t i = 0; i < a.size(); ++i) {
    // Rounded so that a float-typed label tensor (3.0000002) still reads as 3;
    // NaN never equals anything.
    if (std::nearbyint(a[i]) == std::nearbyint(b[i]))
      ++equal;
    else if (first_bad < 0)
      first_bad = static_cast<int64_t>(i);
  }
  const int64_t n = static_cast<int64_t>(a.size());
  GateResult r;
  r.gate = "equal";
  r.passed = equal == n;
  r.value = n ? static_cast<double>(equal) / static_cast<double>(n) : 1.0;
  r.detail = fmt::format("{} elements equal", Fraction(equal, n));
  if (first_bad >= 0)
    r.detail += fmt::format(" (first mismatch at flat index {}: {} vs {})", first_bad, std::nearbyint(a[first_bad]),
                            std::nearbyint(b[first_bad]));
  return r;
}

namespace {

GateResult ApplyGateKind(const GateSpec& spec, const npy::Array& ref, const npy::Array& got, const Metrics& metrics,
                         const GateOptions& options) {
  switch (spec.kind) {
    case GateKind::kCorrelation: return CorrelationGate(metrics, spec.threshold);
    case GateKind::kMaxAbs: return MaxAbsGate(metrics, spec.threshold);
    case GateKind::kMeanAbs: return MeanAbsGate(metrics, spec.threshold);
    case GateKind::kArgmax: return ArgmaxGate(ref, got);
    case GateKind::kTopK: return TopKGate(ref, got, spec.k);
    case GateKind::kEqual: return EqualGate(ref, got);
    case GateKind::kIou:
      if (options.boxes.has_value() == options.mask_threshold.has_value())
        UsageError("an iou gate needs exactly one of --boxes xyxy|cxcywh and --mask-threshold T");
      if (options.boxes) return BoxIouGate(ref, got, *options.boxes, spec.threshold);
      return MaskIouGate(ref, got, *options.mask_threshold, spec.threshold);
    case GateKind::kBoxIou:
      if (!options.boxes) UsageError("a box_iou gate needs --boxes xyxy|cxcywh");
      return BoxIouGate(ref, got, *options.boxes, spec.threshold);
    case GateKind::kMaskIou:
      if (!options.mask_threshold) UsageError("a mask_iou gate needs --mask-threshold T");
      return MaskIouGate(ref, got, *options.mask_threshold, spec.threshold);
  }
  ThrowInternal("unknown gate kind");
}

}  // namespace

GateResult ApplyGate(const GateSpec& spec, const npy::Array& ref, const npy::Array& got, const Metrics& metrics,
                     const GateOptions& options) {
  GateResult r = ApplyGateKind(spec, ref, got, metrics, options);
  r.gate = spec.text;  // as the user wrote it: "corr>=0.999", not a reformatted number
  return r;
}

}  // namespace gpuclean::analyze
