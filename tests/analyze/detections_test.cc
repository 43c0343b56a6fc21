// A detector's outputs judged together: every reference detection above the
// score found again, whatever order the other run lists them in.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace gpuclean::analyze
