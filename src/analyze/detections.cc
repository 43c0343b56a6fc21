// Detections found again: the gate a detection deployment reports (the
// RF-DETR recipe's "same detections at IoU 0.98, same class"), applied to
// a detector's outputs together.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "gpuclean/task_gates.h"

namespace gpuclean::analyze {
namespace {

constexpr size_t kStrongestWhenNoneAbove = 10;

// Labels of a postprocessed detector ([N] integers), read as int64.
std::vector<int64_t> Labels(const npy::Array& a) {
  std::vector<int64_t> out(static_cast<size_t>(a.num_elements()));
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = a.dtype == tfl::TensorType_INT64 ? a.as<int64_t>()[i] : a.as<int32_t>()[i];
  return out;
}

bool IsIntegerRows(const npy::Array& a, int64_t n) {
  return a.shape.size() == 1 && a.shape[0] == n &&
         (a.dtype == tfl::TensorType_INT32 || a.dtype == tfl::TensorType_INT64);
}

// boxes [N, 4], scores [N] and labels [N]: a detector after its NMS.
std::optional<DetectionLayout> PostprocessedLayout(const std::vector<npy::Array>& reference) {
  DetectionLayout layout;
  for (size_t o = 0; o < reference.size() && layout.boxes < 0; ++o) {
    const npy::Array& r = reference[o];
    if (r.shape.size() == 2 && r.shape[1] == 4 && r.dtype == tfl::TensorType_FLOAT32)
      layout.boxes = static_cast<int>(o);
  }
  if (layout.boxes < 0) return std::nullopt;
  const int64_t n = reference[layout.boxes].shape[0];
  for (size_t o = 0; o < reference.size(); ++o) {
    const npy::Array& r = reference[o];
    if (layout.scores < 0 && r.shape.size() == 1 && r.shape[0] == n && r.dtype == tfl::TensorType_FLOAT32)
      layout.scores = static_cast<int>(o);
    if (layout.labels < 0 && IsIntegerRows(r, n)) layout.labels = static_cast<int>(o);
  }
  if (layout.scores < 0 || layout.labels < 0) return std::nullopt;
  layout.format = BoxFormat::kXyxy;
  return layout;
}

bool DetectionRows(const npy::Array& a, int64_t n, size_t rank) {
  return a.shape.size() == rank && a.shape[0] == 1 && a.shape[1] == n && a.dtype == tfl::TensorType_FLOAT32;
}

// The score of detection d: the largest class value, through a sigmoid when
// the values are logits (any outside [0,1]).
std::vector<double> Scores(const npy::Array& scores, bool logits, std::vector<int64_t>* classes) {
  const int64_t n = scores.shape[1], c = scores.shape[2];
  const float* v = scores.as<float>();
  std::vector<double> out(static_cast<size_t>(n));
  classes->assign(static_cast<size_t>(n), 0);
  for (int64_t d = 0; d < n; ++d) {
    int64_t best = 0;
    for (int64_t k = 1; k < c; ++k)
      if (v[d * c + k] > v[d * c + best]) best = k;
    (*classes)[d] = best;
    const double x = v[d * c + best];
    out[d] = logits ? 1.0 / (1.0 + std::exp(-x)) : x;
  }
  return out;
}

double MaskIou(const npy::Array& a, int64_t da, const npy::Array& b, int64_t db, double threshold) {
  const int64_t area = a.num_elements() / a.shape[1];
  const float* x = a.as<float>() + da * area;
  const float* y = b.as<float>() + db * area;
  int64_t inter = 0, uni = 0;
  for (int64_t i = 0; i < area; ++i) {
    const bool p = x[i] > threshold, q = y[i] > threshold;
    inter += p && q;
    uni += p || q;
  }
  return uni == 0 ? 1.0 : static_cast<double>(inter) / static_cast<double>(uni);
}

}  // namespace

std::optional<DetectionLayout> InferDetectionLayout(const std::vector<npy::Array>& reference,
                                                    const GateOptions& given) {
  DetectionLayout layout;
  for (size_t o = 0; o < reference.size(); ++o) {
    const npy::Array& r = reference[o];
    if (layout.boxes < 0 && r.shape.size() == 3 && r.shape[0] == 1 && r.shape[1] > 1 && r.shape[2] == 4 &&
        r.dtype == tfl::TensorType_FLOAT32)
      layout.boxes = static_cast<int>(o);
  }
  if (layout.boxes < 0) return PostprocessedLayout(reference);
  const int64_t n = reference[layout.boxes].shape[1];
  for (size_t o = 0; o < reference.size(); ++o) {
    if (static_cast<int>(o) == layout.boxes) continue;
    const npy::Array& r = reference[o];
    if (layout.scores < 0 && DetectionRows(r, n, 3) && r.shape[2] >= 1) layout.scores = static_cast<int>(o);
    if (DetectionRows(r, n, 4) && r.shape[2] >= 4 && r.shape[3] >= 4) layout.masks.push_back(static_cast<int>(o));
  }
  if (layout.scores < 0) return std::nullopt;
  if (given.boxes) {
    layout.format = *given.boxes;
  } else {
    const float* b = reference[layout.boxes].as<float>();
    bool ordered = true;
    for (int64_t d = 0; d < n && ordered; ++d) ordered = b[d * 4 + 2] >= b[d * 4] && b[d * 4 + 3] >= b[d * 4 + 1];
    layout.format = ordered ? BoxFormat::kXyxy : BoxFormat::kCxcywh;
  }
  if (given.mask_threshold) {
    layout.mask_threshold = *given.mask_threshold;
  } else if (!layout.masks.empty()) {
    const npy::Array& m = reference[layout.masks.front()];
    const float* v = m.as<float>();
    const bool probabilities = std::all_of(v, v + m.num_elements(), [](float x) { return x >= 0 && x <= 1; });
    layout.mask_threshold = probabilities ? 0.5 : 0.0;
  }
  return layout;
}

GateResult DetectionsFoundAgain(const DetectionLayout& layout, const std::vector<npy::Array>& reference,
                                const std::vector<npy::Array>& got, const DetectionGateOptions& options) {
  GateResult r;
  r.gate = fmt::format("detections>{}: box_iou>={}, class, mask_iou>={}", options.score_threshold, options.min_box_iou,
                       options.min_mask_iou);
  const npy::Array& ref_scores = reference.at(layout.scores);
  const npy::Array& got_scores = got.at(layout.scores);
  const npy::Array& ref_boxes = reference.at(layout.boxes);
  const npy::Array& got_boxes = got.at(layout.boxes);
  const bool postprocessed = layout.labels >= 0;
  // A postprocessed detector's runs may keep different numbers of rows.
  const bool shapes_agree = postprocessed ? got_boxes.shape.size() == 2 && got_boxes.shape[1] == 4 &&
                                                got_scores.shape == std::vector<int64_t>{got_boxes.shape[0]} &&
                                                got.at(layout.labels).num_elements() == got_boxes.shape[0]
                                          : got_scores.shape == ref_scores.shape && got_boxes.shape == ref_boxes.shape;
  if (!shapes_agree) {
    r.detail = "the two runs' detection outputs differ in shape";
    return r;
  }
  const float* rs = ref_scores.as<float>();
  const bool logits =
      !postprocessed && std::any_of(rs, rs + ref_scores.num_elements(), [](float x) { return x < 0 || x > 1; });
  std::vector<int64_t> ref_class, got_class;
  std::vector<double> ref_score;
  if (postprocessed) {
    ref_score.assign(rs, rs + ref_scores.num_elements());
    ref_class = Labels(reference.at(layout.labels));
    got_class = Labels(got.at(layout.labels));
  } else {
    ref_score = Scores(ref_scores, logits, &ref_class);
    Scores(got_scores, logits, &got_class);
  }
  const int64_t n = postprocessed ? ref_boxes.shape[0] : ref_boxes.shape[1];
  const int64_t n_got = postprocessed ? got_boxes.shape[0] : n;
  const float* rb = ref_boxes.as<float>();
  const float* gb = got_boxes.as<float>();
  const float* gs = got_scores.as<float>();
  int64_t wanted = 0, found = 0, class_ties = 0;
  double min_box = 1, min_mask = 1;
  std::string first_lost;
  // No reference detection passes the threshold (an untrained or seeded
  // model): the strongest ones are gated instead, so the gate never holds
  // for want of anything to find.
  double threshold = options.score_threshold;
  std::string gated = fmt::format("above {}", threshold);
  if (n > 0 && std::none_of(ref_score.begin(), ref_score.end(), [&](double x) { return x > threshold; })) {
    std::vector<double> sorted = ref_score;
    const size_t top = std::min<size_t>(sorted.size(), kStrongestWhenNoneAbove);
    std::nth_element(sorted.begin(), sorted.begin() + static_cast<ptrdiff_t>(top - 1), sorted.end(),
                     std::greater<double>());
    threshold = std::nextafter(sorted[top - 1], -INFINITY);
    gated = fmt::format("among the {} strongest (none above {})", top, options.score_threshold);
  }
  // A postprocessed detector keeps at most so many detections: when the
  // other run kept as many as this one, a reference detection scoring below
  // everything it kept was outranked at the cap, not lost.
  const float* gs_rows = got_scores.as<float>();
  const double weakest_kept =
      postprocessed && n_got > 0 && n_got >= n ? *std::min_element(gs_rows, gs_rows + n_got) : -INFINITY;
  int64_t at_cap = 0;
  for (int64_t d = 0; d < n; ++d) {
    if (ref_score[d] <= threshold) continue;
    if (ref_score[d] < weakest_kept) {
      ++at_cap;
      continue;
    }
    ++wanted;
    const double a[4] = {rb[d * 4], rb[d * 4 + 1], rb[d * 4 + 2], rb[d * 4 + 3]};
    // The counterpart: the best-overlapping detection of the same class
    // when one overlaps enough (a detector may hold near-duplicate boxes of
    // different classes), else the best-overlapping one, to report.
    int64_t best = -1, best_same = -1;
    double best_iou = -1, best_same_iou = -1;
    for (int64_t e = 0; e < n_got; ++e) {
      const double b[4] = {gb[e * 4], gb[e * 4 + 1], gb[e * 4 + 2], gb[e * 4 + 3]};
      const double iou = BoxIou(a, b, layout.format);
      if (iou > best_iou) best_iou = iou, best = e;
      if (got_class[e] == ref_class[d] && iou > best_same_iou) best_same_iou = iou, best_same = e;
    }
    if (best_same >= 0 && best_same_iou >= options.min_box_iou) best = best_same, best_iou = best_same_iou;
    if (best < 0) {  // the other run kept no detection at all
      if (first_lost.empty())
        first_lost = fmt::format(" (first lost: reference {} score {:.3f} class {}: the other run kept none)", d,
                                 ref_score[d], ref_class[d]);
      min_box = 0;
      continue;
    }
    double mask_iou = 1;
    for (int m : layout.masks)
      mask_iou = std::min(mask_iou, MaskIou(reference.at(m), d, got.at(m), best, layout.mask_threshold));
    bool same_class = got_class[best] == ref_class[d];
    if (!same_class && !postprocessed) {
      const int64_t c = ref_scores.shape[2];
      std::vector<double> ra(rs + d * c, rs + (d + 1) * c), gr(gs + best * c, gs + (best + 1) * c);
      if (ArgmaxNearTie(ra.data(), gr.data(), c, ref_class[d], got_class[best])) {
        same_class = true;
        ++class_ties;
      }
    }
    min_box = std::min(min_box, best_iou);
    if (!layout.masks.empty()) min_mask = std::min(min_mask, mask_iou);
    if (best_iou >= options.min_box_iou && same_class && mask_iou >= options.min_mask_iou) {
      ++found;
    } else if (first_lost.empty()) {
      first_lost =
          fmt::format(" (first lost: reference {} score {:.3f} class {}: best box IoU {:.3f} at {}, class {}{})", d,
                      ref_score[d], ref_class[d], best_iou, best, got_class[best],
                      layout.masks.empty() ? "" : fmt::format(", mask IoU {:.3f}", mask_iou));
    }
  }
  r.passed = found == wanted;
  r.value = wanted == 0 ? 1.0 : static_cast<double>(found) / static_cast<double>(wanted);
  r.detail = fmt::format(
      "{}/{} reference detection(s) {} found again (box IoU min {:.4g}, {}{}){}", found, wanted, gated,
      wanted ? min_box : 1.0,
      class_ties ? fmt::format("same class, {} at a class near-tie", class_ties) : std::string("same class"),
      layout.masks.empty() ? "" : fmt::format(", mask IoU min {:.4g}", wanted ? min_mask : 1.0), first_lost);
  if (at_cap > 0)
    r.detail += fmt::format("; {} more outranked at the cap of {} kept (below the other run's weakest, {:.4g})", at_cap,
                            n_got, weakest_kept);
  return r;
}

std::optional<std::string> DetectionsTiedWithinNoise(const DetectionLayout& layout,
                                                     const std::vector<npy::Array>& reference,
                                                     const std::vector<npy::Array>& got, double atol) {
  if (layout.labels < 0) return std::nullopt;
  const npy::Array &rb = reference.at(layout.boxes), &gb = got.at(layout.boxes);
  const npy::Array &rs = reference.at(layout.scores), &gs = got.at(layout.scores);
  if (rb.shape != gb.shape || rs.shape != gs.shape || rb.shape.size() != 2) return std::nullopt;
  const int64_t n = rb.shape[0];
  const std::vector<int64_t> rl = Labels(reference.at(layout.labels)), gl = Labels(got.at(layout.labels));
  if (static_cast<int64_t>(rl.size()) != n || static_cast<int64_t>(gl.size()) != n) return std::nullopt;
  const float *rbv = rb.as<float>(), *gbv = gb.as<float>(), *rsv = rs.as<float>(), *gsv = gs.as<float>();
  const auto near = [&](double a, double b) { return std::fabs(a - b) <= atol * std::max(1.0, std::fabs(a)); };
  std::vector<bool> taken(static_cast<size_t>(n), false);
  int64_t other_box = 0;
  for (int64_t r = 0; r < n; ++r) {
    const double a[4] = {rbv[r * 4], rbv[r * 4 + 1], rbv[r * 4 + 2], rbv[r * 4 + 3]};
    int64_t partner = -1;
    bool exact = false;
    for (int64_t d = 0; d < n && !exact; ++d)
      for (const int64_t g : {r - d, r + d}) {
        if (g < 0 || g >= n || taken[g] || gl[g] != rl[r] || !near(rsv[r], gsv[g])) continue;
        const double b[4] = {gbv[g * 4], gbv[g * 4 + 1], gbv[g * 4 + 2], gbv[g * 4 + 3]};
        const bool same = near(a[0], b[0]) && near(a[1], b[1]) && near(a[2], b[2]) && near(a[3], b[3]);
        if (same) {
          partner = g, exact = true;
          break;
        }
        if (partner < 0 && BoxIou(a, b, layout.format) >= 0.5) partner = g;
      }
    if (partner < 0) return std::nullopt;
    taken[partner] = true;
    other_box += !exact;
  }
  return fmt::format("{}/{} rows paired, {} another box of the same object at a tied score", n, n, other_box);
}

}  // namespace gpuclean::analyze
