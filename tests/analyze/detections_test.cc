// A detector's outputs judged together: every reference detection above the
// score found again, whatever order the other run lists them in.
#include <gtest/gtest.h>

#include <array>
#include <cstring>

#include "gpuclean/task_gates.h"

namespace gpuclean::analyze {
namespace {

npy::Array Floats(std::vector<int64_t> shape, const std::vector<float>& v) {
  npy::Array a;
  a.dtype = tfl::TensorType_FLOAT32;
  a.shape = std::move(shape);
  a.data.resize(v.size() * 4);
  std::memcpy(a.data.data(), v.data(), a.data.size());
  return a;
}

// Three detections: logits over 2 classes, cxcywh boxes, 4x4 mask logits.
std::vector<npy::Array> Detector(const std::vector<int>& order, float weak_logit) {
  const std::vector<std::vector<float>> logits = {{3, -2}, {-1, 2.5f}, {weak_logit, -4}};
  const std::vector<std::vector<float>> boxes = {
      {0.3f, 0.3f, 0.2f, 0.2f}, {0.7f, 0.6f, 0.3f, 0.2f}, {0.5f, 0.5f, 0.1f, 0.1f}};
  std::vector<float> l, b, m;
  for (int d : order) {
    l.insert(l.end(), logits[d].begin(), logits[d].end());
    b.insert(b.end(), boxes[d].begin(), boxes[d].end());
    for (int i = 0; i < 16; ++i) m.push_back((i % 4 <= d) ? 1.0f : -1.0f);
  }
  return {Floats({1, 3, 2}, l), Floats({1, 3, 4}, b), Floats({1, 3, 4, 4}, m)};
}

TEST(Detections, TheLayoutIsInferredFromShapes) {
  const auto ref = Detector({0, 1, 2}, -3);
  const auto layout = InferDetectionLayout(ref);
  ASSERT_TRUE(layout.has_value());
  EXPECT_EQ(layout->scores, 0);
  EXPECT_EQ(layout->boxes, 1);
  EXPECT_EQ(layout->masks, std::vector<int>{2});
  EXPECT_EQ(layout->format, BoxFormat::kCxcywh);
  EXPECT_EQ(layout->mask_threshold, 0.0);
  EXPECT_FALSE(InferDetectionLayout({Floats({1, 3}, {0, 1, 2})}).has_value());
}

TEST(Detections, AnotherOrderFindsEveryDetection) {
  const auto ref = Detector({0, 1, 2}, -3);
  const auto got = Detector({2, 0, 1}, -3);
  const GateResult r = DetectionsFoundAgain(*InferDetectionLayout(ref), ref, got);
  EXPECT_TRUE(r.passed) << r.detail;
  EXPECT_NE(r.detail.find("2/2 reference detection(s) above 0.5 found again"), std::string::npos) << r.detail;
}

TEST(Detections, ALostDetectionAboveTheScoreFails) {
  auto ref = Detector({0, 1, 2}, 4);  // the third detection is strong now
  auto got = Detector({0, 1, 2}, 4);
  // The other run moved detection 2's box away: it is not found again.
  float* b = reinterpret_cast<float*>(got[1].data.data());
  b[8] = 0.1f;
  b[9] = 0.9f;
  const GateResult r = DetectionsFoundAgain(*InferDetectionLayout(ref), ref, got);
  EXPECT_FALSE(r.passed);
  EXPECT_NE(r.detail.find("2/3"), std::string::npos) << r.detail;
  EXPECT_NE(r.detail.find("first lost: reference 2"), std::string::npos) << r.detail;
}

// A detector after its NMS: boxes [N, 4] xyxy, scores [N], labels [N] int64,
// as many rows as each run kept.
std::vector<npy::Array> Kept(const std::vector<std::array<float, 4>>& boxes, const std::vector<float>& scores,
                             const std::vector<int64_t>& labels) {
  std::vector<float> b;
  for (const auto& box : boxes) b.insert(b.end(), box.begin(), box.end());
  npy::Array l;
  l.dtype = tfl::TensorType_INT64;
  l.shape = {static_cast<int64_t>(labels.size())};
  l.data.resize(labels.size() * 8);
  std::memcpy(l.data.data(), labels.data(), l.data.size());
  return {Floats({static_cast<int64_t>(boxes.size()), 4}, b), Floats({static_cast<int64_t>(scores.size())}, scores), l};
}

TEST(Detections, APostprocessedDetectorKeepingAnotherCountIsJudgedByRows) {
  const auto ref = Kept({{10, 10, 50, 60}, {100, 20, 140, 90}, {5, 5, 9, 9}}, {0.9f, 0.7f, 0.2f}, {3, 7, 1});
  const auto layout = InferDetectionLayout(ref);
  ASSERT_TRUE(layout.has_value());
  EXPECT_EQ(layout->boxes, 0);
  EXPECT_EQ(layout->scores, 1);
  EXPECT_EQ(layout->labels, 2);
  // The other run lists them in another order and keeps a fourth, weak one.
  const auto got = Kept({{100, 20, 140, 90}, {10, 10, 50, 60.1f}, {5, 5, 9, 9}, {0, 0, 1, 1}},
                        {0.71f, 0.89f, 0.2f, 0.1f}, {7, 3, 1, 2});
  const GateResult r = DetectionsFoundAgain(*layout, ref, got);
  EXPECT_TRUE(r.passed) << r.detail;
  EXPECT_NE(r.detail.find("2/2 reference detection(s) above 0.5 found again"), std::string::npos) << r.detail;
  // Another class for the second box is a lost detection.
  const auto relabelled = Kept({{100, 20, 140, 90}, {10, 10, 50, 60}}, {0.71f, 0.89f}, {8, 3});
  const GateResult lost = DetectionsFoundAgain(*layout, ref, relabelled);
  EXPECT_FALSE(lost.passed);
  EXPECT_NE(lost.detail.find("first lost: reference 1"), std::string::npos) << lost.detail;
}

TEST(Detections, NoneAboveTheThresholdGatesTheStrongestInstead) {
  // A seeded detector: nothing scores 0.5, so 0/0 would hold for anything.
  const auto ref = Kept({{10, 10, 50, 60}, {100, 20, 140, 90}}, {0.12f, 0.11f}, {3, 7});
  const auto moved = Kept({{10, 10, 50, 60}, {0, 0, 4, 4}}, {0.12f, 0.11f}, {3, 7});
  const GateResult r = DetectionsFoundAgain(*InferDetectionLayout(ref), ref, moved);
  EXPECT_FALSE(r.passed) << r.detail;
  EXPECT_NE(r.detail.find("1/2 reference detection(s) among the 2 strongest (none above 0.5)"), std::string::npos)
      << r.detail;
}

TEST(Detections, ADetectionBelowEverythingTheOtherRunKeptIsOutrankedAtTheCap) {
  // Both runs kept two (their cap); the reference's second is weaker than
  // anything the other run kept.
  const auto ref = Kept({{10, 10, 50, 60}, {100, 20, 140, 90}}, {0.9f, 0.6f}, {3, 7});
  const auto got = Kept({{10, 10, 50, 60}, {200, 20, 240, 90}}, {0.9f, 0.61f}, {3, 5});
  const GateResult r = DetectionsFoundAgain(*InferDetectionLayout(ref), ref, got);
  EXPECT_TRUE(r.passed) << r.detail;
  EXPECT_NE(r.detail.find("1 more outranked at the cap of 2 kept"), std::string::npos) << r.detail;
}

}  // namespace
}  // namespace gpuclean::analyze
