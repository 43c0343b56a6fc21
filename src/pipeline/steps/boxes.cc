// Box host steps: layout conversion, anchor delta decoding and DETR-style
// reparametrisation. Boxes are float32 rows of 4 on the last axis.
#include <algorithm>
#include <cmath>

#include "gpuclean/host_steps.h"
#include "pipeline/steps/step_util.h"

namespace gpuclean::pipeline {
using steps::Fail;

namespace {

void RequireBoxes(std::string_view step, const npy::Array& boxes, const char* what) {
  steps::RequireWellFormed(step, boxes, what);
  steps::RequireFloat(step, boxes, what);
  if (boxes.shape.empty() || boxes.shape.back() != 4)
    Fail(step, "{} {} must have a last axis of 4", what, steps::ShapeText(boxes.shape));
}

// Applies f(delta_row, reference_row, out_row) with `reference` broadcast
// against `deltas` box by box.
template <typename F>
npy::Array PerBox(std::string_view step, const npy::Array& deltas, const npy::Array& reference, F f) {
  RequireBoxes(step, deltas, "deltas");
  RequireBoxes(step, reference, "reference");
  std::vector<int64_t> dbox(deltas.shape.begin(), deltas.shape.end() - 1);
  std::vector<int64_t> rbox(reference.shape.begin(), reference.shape.end() - 1);
  std::vector<int64_t> shape = steps::BroadcastShape(step, dbox, rbox);
  const std::vector<int64_t> id = steps::BroadcastIndex(dbox, shape), ir = steps::BroadcastIndex(rbox, shape);
  shape.push_back(4);
  npy::Array out = steps::MakeArray(tfl::TensorType_FLOAT32, shape);
  for (size_t i = 0; i < id.size(); ++i)
    f(deltas.as<float>() + id[i] * 4, reference.as<float>() + ir[i] * 4, out.as<float>() + i * 4);
  return out;
}

}  // namespace

BoxLayout ParseBoxLayout(const std::string& name) {
  if (name == "xyxy") return BoxLayout::kXyxy;
  if (name == "cxcywh") return BoxLayout::kCxcywh;
  ThrowBadInput("box layout '" + name + "' is neither xyxy nor cxcywh");
}

npy::Array ConvertBoxes(const npy::Array& boxes, BoxLayout from, BoxLayout to) {
  RequireBoxes("box_convert", boxes, "boxes");
  npy::Array out = boxes;
  if (from == to) return out;
  float* b = out.as<float>();
  for (int64_t i = 0, n = boxes.num_elements() / 4; i < n; ++i, b += 4) {
    const float p = b[0], q = b[1], r = b[2], s = b[3];
    if (from == BoxLayout::kCxcywh) {  // to xyxy
      b[0] = p - 0.5f * r, b[1] = q - 0.5f * s, b[2] = p + 0.5f * r, b[3] = q + 0.5f * s;
    } else {  // xyxy to cxcywh
      b[0] = 0.5f * (p + r), b[1] = 0.5f * (q + s), b[2] = r - p, b[3] = s - q;
    }
  }
  return out;
}

npy::Array DecodeBoxDeltas(const npy::Array& deltas, const npy::Array& anchors, std::array<float, 4> weights,
                           float max_log_scale) {
  for (float w : weights)
    if (!(w > 0) || !std::isfinite(w)) Fail("box_decode", "weights must be positive and finite, got {}", w);
  return PerBox("box_decode", deltas, anchors, [&](const float* d, const float* a, float* o) {
    o[0] = a[0] + d[0] / weights[0] * a[2];
    o[1] = a[1] + d[1] / weights[1] * a[3];
    o[2] = a[2] * std::exp(std::min(d[2] / weights[2], max_log_scale));
    o[3] = a[3] * std::exp(std::min(d[3] / weights[3], max_log_scale));
  });
}

npy::Array ReparamBoxes(const npy::Array& deltas, const npy::Array& reference) {
  return PerBox("box_reparam", deltas, reference, [](const float* d, const float* r, float* o) {
    o[0] = d[0] * r[2] + r[0];
    o[1] = d[1] * r[3] + r[1];
    o[2] = std::exp(d[2]) * r[2];
    o[3] = std::exp(d[3]) * r[3];
  });
}

}  // namespace gpuclean::pipeline
