#pragma once
// Pass/fail gates between a reference tensor and another run of it: the
// numeric gates (correlation, max abs diff) and the task gates (argmax,
// top-K, IoU of boxes or masks, exact token equality) that `compare` and
// `record` apply. One function per gate; each returns a GateResult that says
// what was measured, so a failed gate can be read without re-running.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuclean/metrics.h"
#include "gpuclean/npy.h"

namespace gpuclean::analyze {

enum class GateKind { kCorrelation, kMaxAbs, kMeanAbs, kArgmax, kTopK, kIou, kBoxIou, kMaskIou, kEqual };

// One --gate value: "corr>=X", "maxabs<=X", "meanabs<=X", "argmax", "topk=K", "iou>=X",
// "box_iou>=X", "mask_iou>=X", "equal", optionally prefixed with a tensor
// file name ("out0:argmax" or "out0.npy:argmax") to apply it to that tensor
// only. iou>=X reads boxes or masks as the options say (exactly one of
// them); box_iou and mask_iou name theirs, so one run can gate a
// detector's boxes and its masks.
struct GateSpec {
  GateKind kind = GateKind::kCorrelation;
  double threshold = 0;  // corr>=, maxabs<=, meanabs<=, iou>=
  int k = 0;             // topk=K
  std::string tensor;    // file name without ".npy"; empty: every tensor
  std::string text;      // the gate without the tensor prefix, as written
};

// Throws Error(kUsage) naming the accepted forms.
GateSpec ParseGate(const std::string& text);

enum class BoxFormat { kXyxy, kCxcywh };
BoxFormat ParseBoxFormat(const std::string& name);  // "xyxy" | "cxcywh"; Error(kUsage)

// How iou>=X reads its tensors: boxes (last axis 4) or masks thresholded at
// mask_threshold. Exactly one must be set for an iou gate; box_iou needs
// boxes, mask_iou mask_threshold.
struct GateOptions {
  std::optional<BoxFormat> boxes;
  std::optional<double> mask_threshold;
};

struct GateResult {
  std::string gate;  // GateSpec::text
  bool passed = false;
  double value = 0;    // what was compared with the threshold (or the matching fraction)
  std::string detail;  // one line, e.g. "argmax equal in 9/10 rows (first mismatch row 3: 4 vs 7)"
};

nlohmann::json ToJson(const GateResult& result);

// --- one function per gate -------------------------------------------------
// Numeric gates read Metrics (over the elements finite on both sides) and
// fail when the two sides disagree on how many elements are non-finite:
// a NaN that max_abs_diff skips must not pass.
GateResult CorrelationGate(const Metrics& metrics, double min_correlation);
GateResult MaxAbsGate(const Metrics& metrics, double max_abs_diff);
// Mean abs diff over the elements finite on both sides: landmark error in
// the output's units, where one outlier should not decide alone.
GateResult MeanAbsGate(const Metrics& metrics, double mean_abs_diff);
// Rows are every index of the leading axes; the argmax runs over the last
// axis, first index on ties, NaN wins (numpy's argmax). Passes when every row
// agrees.
GateResult ArgmaxGate(const npy::Array& ref, const npy::Array& got);
// Whether a row whose argmax differs (ref_choice in the reference,
// got_choice in the other run) is a near-tie: the reference's two scores are
// closer than twice the run's noise on the row's other values and within 1%
// of the row's scale - either choice is as valid as the numbers behind it.
bool ArgmaxNearTie(const double* ref_row, const double* got_row, int64_t width, int64_t ref_choice, int64_t got_choice);
// The sets of the K largest indices per row (last axis) are equal; order
// inside the set does not matter. Ties go to the lower index.
GateResult TopKGate(const npy::Array& ref, const npy::Array& got, int k);
// Boxes: the last axis holds 4 coordinates, one box per row, box i of REF
// paired with box i of GOT. Passes when the minimum IoU over the boxes is at
// least min_iou (every box has to match, not the average); the mean is
// reported too. Two empty boxes (zero union) count as IoU 1 when equal.
GateResult BoxIouGate(const npy::Array& ref, const npy::Array& got, BoxFormat format, double min_iou);
// Masks: value > threshold is foreground. The masks are the last two axes
// after dropping trailing size-1 axes ([1,H,W,1] is one H×W mask,
// [1,N,H,W] is N masks). Passes when the minimum per-mask IoU is at least
// min_iou; two empty masks count as IoU 1.
GateResult MaskIouGate(const npy::Array& ref, const npy::Array& got, double threshold, double min_iou);
// Token / label sequences: every element equal after rounding floats to the
// nearest integer (integers compare exactly).
GateResult EqualGate(const npy::Array& ref, const npy::Array& got);

// Dispatches a parsed gate. Error(kUsage) when an iou gate has neither or
// both of boxes / mask_threshold; Error(kBadInput) when a tensor cannot take
// the gate (boxes without a last axis of 4, top-K larger than the last axis).
GateResult ApplyGate(const GateSpec& spec, const npy::Array& ref, const npy::Array& got, const Metrics& metrics,
                     const GateOptions& options);

// --- detections in another order ------------------------------------------
// Boxes [..., N, 4]: each leading index is one set of N detections. For
// every set, got_index[r] is the GOT box paired with REF box r: pairs are
// taken greedily by descending IoU (ties: lower REF, then lower GOT index),
// each box used once; boxes left over (zero overlap) pair in index order.
// A detector's ranking may swap near-equal detections between two runs
// without changing what it detects; gates then compare like with like.
// Boxes overlapping at least this much are the same detection.
inline constexpr double kPairedIou = 0.5;

struct BoxMatching {
  int64_t sets = 0, per_set = 0;
  std::vector<int64_t> got_index;  // sets * per_set, within each set
  int64_t moved = 0;               // pairs whose indices differ
  // Per reference detection: a counterpart at IoU >= kPairedIou. One
  // without is a different selection (a top-K near-tie swapped a proposal
  // in or out), not a worse value of the same one.
  std::vector<bool> paired;
  int64_t unpaired = 0;
};
BoxMatching MatchBoxes(const npy::Array& ref, const npy::Array& got, BoxFormat format);
// `got` reordered by the matching on its leading axes [sets..., per_set]:
// the detections' classes, scores and masks follow their boxes.
// Error(kBadInput) when its leading axes do not hold sets * per_set rows.
npy::Array ApplyBoxMatching(const npy::Array& got, const BoxMatching& matching);

// `a` with only the rows `rows` (in that order) of its axis `axis`: the
// slices along that axis, each row everything after it.
npy::Array TakeRows(const npy::Array& a, size_t axis, const std::vector<int64_t>& rows);

// --- building blocks, exposed for tests -------------------------------------
// IoU of two boxes in the given format; 1 when both have zero area and are equal.
double BoxIou(const double a[4], const double b[4], BoxFormat format);

}  // namespace gpuclean::analyze
