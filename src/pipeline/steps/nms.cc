// Greedy, per-class non-maximum suppression (the end of a detector, which no
// mobile GPU delegate takes).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "gpuclean/host_steps.h"
#include "pipeline/steps/step_util.h"

namespace gpuclean::pipeline {
using steps::Fail;

namespace {

struct Box {
  float x0, y0, x1, y1;
  float area() const { return std::max(0.0f, x1 - x0) * std::max(0.0f, y1 - y0); }
};

Box ToCorners(const float* b, BoxLayout layout) {
  Box box = layout == BoxLayout::kXyxy
                ? Box{b[0], b[1], b[2], b[3]}
                : Box{b[0] - 0.5f * b[2], b[1] - 0.5f * b[3], b[0] + 0.5f * b[2], b[1] + 0.5f * b[3]};
  // Corners in either order, as NON_MAX_SUPPRESSION reads them.
  if (box.x0 > box.x1) std::swap(box.x0, box.x1);
  if (box.y0 > box.y1) std::swap(box.y0, box.y1);
  return box;
}

float Iou(const Box& a, const Box& b) {
  const float w = std::min(a.x1, b.x1) - std::max(a.x0, b.x0);
  const float h = std::min(a.y1, b.y1) - std::max(a.y0, b.y0);
  if (w <= 0 || h <= 0) return 0.0f;
  const float inter = w * h, uni = a.area() + b.area() - inter;
  return uni > 0 ? inter / uni : 0.0f;
}

}  // namespace

npy::Array NonMaxSuppression(const npy::Array& boxes, const npy::Array& scores, const npy::Array& classes,
                             const NmsOptions& options) {
  steps::RequireWellFormed("nms", boxes, "boxes");
  steps::RequireWellFormed("nms", scores, "scores");
  steps::RequireFloat("nms", boxes, "boxes");
  steps::RequireFloat("nms", scores, "scores");
  if (boxes.shape.size() != 2 || boxes.shape[1] != 4)
    Fail("nms", "boxes {} must be [N,4]", steps::ShapeText(boxes.shape));
  const int64_t n = boxes.shape[0];
  if (scores.shape != std::vector<int64_t>{n})
    Fail("nms", "scores {} must be [{}], one per box", steps::ShapeText(scores.shape), n);
  if (n > INT32_MAX) Fail("nms", "{} boxes are more than int32 indices reach", n);
  std::vector<int64_t> cls;
  if (!classes.data.empty() || !classes.shape.empty()) {
    steps::RequireWellFormed("nms", classes, "classes");
    if (classes.shape != std::vector<int64_t>{n})
      Fail("nms", "classes {} must be [{}], one per box", steps::ShapeText(classes.shape), n);
    cls = steps::ReadIndices("nms", classes);
  }
  if (options.max_detections < 0) Fail("nms", "max_detections {} is negative", options.max_detections);
  if (!(options.iou_threshold >= 0 && options.iou_threshold <= 1))
    Fail("nms", "iou_threshold {} is outside [0, 1]", options.iou_threshold);

  const float* s = scores.as<float>();
  std::vector<int32_t> order;
  for (int64_t i = 0; i < n; ++i)
    if (s[i] >= options.score_threshold && !std::isnan(s[i])) order.push_back(static_cast<int32_t>(i));
  std::stable_sort(order.begin(), order.end(), [s](int32_t a, int32_t b) { return s[a] > s[b]; });

  std::vector<Box> corners(n);
  for (int64_t i = 0; i < n; ++i) corners[i] = ToCorners(boxes.as<float>() + i * 4, options.layout);
  std::vector<int32_t> kept;
  for (int32_t i : order) {
    if (static_cast<int64_t>(kept.size()) >= options.max_detections) break;
    bool suppressed = false;
    for (int32_t j : kept)
      if ((cls.empty() || cls[i] == cls[j]) && Iou(corners[i], corners[j]) > options.iou_threshold) {
        suppressed = true;
        break;
      }
    if (!suppressed) kept.push_back(i);
  }
  npy::Array out = steps::MakeArray(tfl::TensorType_INT32, {static_cast<int64_t>(kept.size())});
  std::copy(kept.begin(), kept.end(), out.as<int32_t>());
  return out;
}

}  // namespace gpuclean::pipeline
