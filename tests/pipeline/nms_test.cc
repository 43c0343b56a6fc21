// Non-maximum suppression. No delegate or gpuclean kernel runs
// NON_MAX_SUPPRESSION, so the oracle is its definition: hand-computed cases
// and the greedy invariants on random detections.
#include "gpuclean/host_steps.h"

#include <algorithm>
#include <cmath>

#include "support/arrays.h"
#include "support/conformance.h"

namespace gpuclean::pipeline {
namespace {

std::vector<int32_t> Values(const npy::Array& a) { return {a.as<int32_t>(), a.as<int32_t>() + a.num_elements()}; }

float Iou(const float* a, const float* b) {
  const float w = std::min(a[2], b[2]) - std::max(a[0], b[0]), h = std::min(a[3], b[3]) - std::max(a[1], b[1]);
  if (w <= 0 || h <= 0) return 0;
  const float inter = w * h;
  return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter);
}

TEST(HostNms, HandComputedOverlaps) {
  // Box 1 overlaps box 0 by IoU 0.81 and goes; box 2 is apart; box 3 is
  // under the score threshold.
  const npy::Array boxes = testing::F32({4, 4}, {0, 0, 10, 10, 0, 1, 10, 10, 20, 20, 30, 30, 0, 0, 10, 10});
  const npy::Array scores = testing::F32({4}, {0.9f, 0.8f, 0.7f, 0.1f});
  NmsOptions o;
  o.score_threshold = 0.2f;
  EXPECT_EQ(Values(NonMaxSuppression(boxes, scores, {}, o)), (std::vector<int32_t>{0, 2}));
  // Per class: box 1 is of another class and stays.
  const npy::Array classes = testing::I32({4}, {0, 1, 0, 0});
  EXPECT_EQ(Values(NonMaxSuppression(boxes, scores, classes, o)), (std::vector<int32_t>{0, 1, 2}));
  o.max_detections = 1;
  EXPECT_EQ(Values(NonMaxSuppression(boxes, scores, classes, o)), (std::vector<int32_t>{0}));
  // cxcywh reads the same boxes.
  o = {};
  o.layout = BoxLayout::kCxcywh;
  const npy::Array centred = ConvertBoxes(boxes, BoxLayout::kXyxy, BoxLayout::kCxcywh);
  EXPECT_EQ(Values(NonMaxSuppression(centred, scores, {}, o)), (std::vector<int32_t>{0, 2}));
}

TEST(HostNms, GreedyInvariantsOnRandomDetections) {
  const int n = 200;
  npy::Array boxes = testing::RandomF32({n, 4}, 9, 0.0f, 1.0f);
  for (int i = 0; i < n; ++i) {  // x0 < x1, y0 < y1, boxes of 0.05..0.3
    float* b = boxes.as<float>() + i * 4;
    b[2] = b[0] + 0.05f + 0.25f * b[2];
    b[3] = b[1] + 0.05f + 0.25f * b[3];
  }
  const npy::Array scores = testing::RandomF32({n}, 10, 0.0f, 1.0f);
  npy::Array classes = testing::I32({n}, std::vector<int32_t>(n));
  for (int i = 0; i < n; ++i) classes.as<int32_t>()[i] = i % 3;
  NmsOptions o;
  o.iou_threshold = 0.4f;
  o.max_detections = 1000;
  const std::vector<int32_t> kept = Values(NonMaxSuppression(boxes, scores, classes, o));
  ASSERT_FALSE(kept.empty());
  std::vector<bool> is_kept(n, false);
  for (size_t i = 0; i < kept.size(); ++i) {
    is_kept[kept[i]] = true;
    if (i > 0) EXPECT_GE(scores.as<float>()[kept[i - 1]], scores.as<float>()[kept[i]]);
    for (size_t j = 0; j < i; ++j)
      if (classes.as<int32_t>()[kept[i]] == classes.as<int32_t>()[kept[j]])
        EXPECT_LE(Iou(boxes.as<float>() + kept[i] * 4, boxes.as<float>() + kept[j] * 4), o.iou_threshold);
  }
  // Every dropped box overlaps a kept box of its class that scores higher.
  for (int i = 0; i < n; ++i) {
    if (is_kept[i]) continue;
    bool explained = false;
    for (int32_t k : kept)
      explained |= classes.as<int32_t>()[k] == classes.as<int32_t>()[i] &&
                   scores.as<float>()[k] >= scores.as<float>()[i] &&
                   Iou(boxes.as<float>() + k * 4, boxes.as<float>() + i * 4) > o.iou_threshold;
    EXPECT_TRUE(explained) << "box " << i << " dropped without a reason";
  }
}

TEST(HostNms, RefusesMismatchedInputs) {
  const npy::Array boxes = testing::F32({2, 4}, {0, 0, 1, 1, 0, 0, 1, 1});
  EXPECT_THROW(NonMaxSuppression(boxes, testing::F32({3}, {1, 1, 1}), {}, {}), Error);
  EXPECT_THROW(NonMaxSuppression(testing::F32({2, 2}, {0, 0, 1, 1}), testing::F32({2}, {1, 1}), {}, {}), Error);
  EXPECT_THROW(NonMaxSuppression(boxes, testing::F32({2}, {1, 1}), testing::I32({1}, {0}), {}), Error);
}

}  // namespace
}  // namespace gpuclean::pipeline
