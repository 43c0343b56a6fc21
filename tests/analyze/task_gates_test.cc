// Task gates per output: what InferTaskGates picks from shape, name and
// values, how given gates replace it, and how ApplyTaskGates judges.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "gpuclean/builder.h"
#include "gpuclean/error.h"
#include "gpuclean/task_gates.h"
#include "support/arrays.h"

namespace gpuclean::analyze {
namespace {

using gpuclean::testing::F32;

// A graph with one output per shape; the ops do not matter, only the
// outputs' names and shapes.
ir::Subgraph Outputs(const std::vector<std::pair<std::string, std::vector<int32_t>>>& outputs) {
  ir::Subgraph g;
  for (const auto& [name, shape] : outputs) {
    ir::Tensor t;
    t.name = name;
    t.shape = shape;
    g.outputs.push_back(static_cast<int32_t>(g.tensors.size()));
    g.tensors.push_back(t);
  }
  return g;
}

npy::Array Filled(std::vector<int64_t> shape, float lo, float hi) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v(n);
  // A ramp from lo to hi (repeating every 97 elements in long arrays).
  const float steps = static_cast<float>(std::max<int64_t>(1, std::min<int64_t>(n, 97) - 1));
  for (int64_t i = 0; i < n; ++i) v[i] = lo + (hi - lo) * static_cast<float>(i % 97) / steps;
  return F32(shape, v);
}

TEST(TaskGates, InferredFromShapeNameAndValues) {
  const ir::Subgraph g = Outputs({{"segmentation", {1, 64, 64, 1}},
                                  {"mask_prob", {1, 1, 32, 32}},
                                  {"heatmaps", {1, 16, 16, 39}},
                                  {"class_logits", {1, 1000}},
                                  {"landmarks", {1, 63}},
                                  {"flag", {1, 1}}});
  const std::vector<npy::Array> ref = {Filled({1, 64, 64, 1}, -30, 20), Filled({1, 1, 32, 32}, 0, 1),
                                       Filled({1, 16, 16, 39}, -1, 1),  Filled({1, 1000}, -5, 5),
                                       Filled({1, 63}, 10, 210),        Filled({1, 1}, 3, 3)};
  const std::vector<OutputGate> gates = InferTaskGates(g, ref);
  ASSERT_EQ(gates.size(), 7u) << "regression outputs get a mean and a max gate, flags one";
  EXPECT_EQ(gates[0].spec.kind, GateKind::kIou);
  EXPECT_EQ(gates[0].options.mask_threshold, 0.0) << "logits threshold at 0";
  EXPECT_EQ(gates[1].spec.kind, GateKind::kIou);
  EXPECT_EQ(gates[1].options.mask_threshold, 0.5) << "probabilities threshold at 0.5";
  EXPECT_EQ(gates[2].spec.kind, GateKind::kCorrelation);
  EXPECT_EQ(gates[3].spec.kind, GateKind::kArgmax);
  EXPECT_EQ(gates[4].spec.kind, GateKind::kMeanAbs);
  EXPECT_NEAR(gates[4].spec.threshold, 2.1, 1e-9) << "1% of the landmarks' scale (max |ref| 210)";
  EXPECT_EQ(gates[5].spec.kind, GateKind::kMaxAbs);
  EXPECT_NEAR(gates[5].spec.threshold, 10.5, 1e-9) << "5% of it";
  EXPECT_EQ(gates[6].output, 5);
  EXPECT_EQ(gates[6].spec.kind, GateKind::kMaxAbs);
  EXPECT_NEAR(gates[6].spec.threshold, 0.15, 1e-9) << "5% of max(1, |3|)";
  for (const OutputGate& gate : gates) {
    EXPECT_TRUE(gate.inferred);
    EXPECT_FALSE(gate.why.empty());
  }
}

TEST(TaskGates, GivenGatesReplaceTheInferredOneOfTheirOutput) {
  const ir::Subgraph g = Outputs({{"Identity", {1, 63}}, {"StatefulPartitionedCall:1", {1, 64, 64, 1}}});
  const std::vector<npy::Array> ref = {Filled({1, 63}, 0, 100), Filled({1, 64, 64, 1}, -1, 1)};
  const std::vector<OutputGate> inferred = InferTaskGates(g, ref);
  GateOptions options;
  options.mask_threshold = 0.25;
  std::vector<OutputGate> gates =
      ResolveTaskGates(g, {ParseGate("StatefulPartitionedCall:1:iou>=0.9")}, options, inferred);
  ASSERT_EQ(gates.size(), 3u);
  EXPECT_TRUE(gates[0].inferred);
  EXPECT_TRUE(gates[1].inferred);
  EXPECT_EQ(gates[2].output, 1);
  EXPECT_FALSE(gates[2].inferred);
  EXPECT_EQ(gates[2].options.mask_threshold, 0.25);
  gates = ResolveTaskGates(g, {ParseGate("out0:maxabs<=2"), ParseGate("1:corr>=0.9")}, {}, inferred);
  ASSERT_EQ(gates.size(), 2u);
  EXPECT_DOUBLE_EQ(gates[0].spec.threshold, 2);
  EXPECT_EQ(gates[1].spec.kind, GateKind::kCorrelation);
  gates = ResolveTaskGates(g, {ParseGate("corr>=0.5")}, {}, inferred);  // no OUT: every output
  ASSERT_EQ(gates.size(), 2u);
  EXPECT_FALSE(gates[0].inferred);
  EXPECT_THROW(ResolveTaskGates(g, {ParseGate("out7:argmax")}, {}, inferred), Error);
  EXPECT_THROW(ResolveTaskGates(g, {ParseGate("nosuch:argmax")}, {}, inferred), Error);
}

TEST(TaskGates, DriftWithinTheGatePassesAndNonFiniteFails) {
  const ir::Subgraph g = Outputs({{"mask", {1, 32, 32, 1}}, {"landmarks", {1, 8}}});
  npy::Array mask = Filled({1, 32, 32, 1}, -10, 10);
  npy::Array landmarks = F32({1, 8}, {0, 50, 100, 150, 200, 10, 20, 30});
  const std::vector<OutputGate> gates = InferTaskGates(g, {mask, landmarks});

  // Logit drift far from the threshold, landmark drift under 2 px: both hold
  // although the raw numbers moved.
  npy::Array mask_drift = mask;
  for (int64_t i = 0; i < mask_drift.num_elements(); ++i)
    if (std::fabs(mask.as<float>()[i]) > 1) mask_drift.as<float>()[i] *= 1.3f;
  npy::Array landmarks_drift = F32({1, 8}, {0.5f, 51.5f, 99, 150, 201, 10, 20, 30});
  std::vector<OutputGateResult> results = ApplyTaskGates(gates, {mask, landmarks}, {mask_drift, landmarks_drift});
  ASSERT_EQ(results.size(), 3u);
  for (const OutputGateResult& r : results) EXPECT_TRUE(r.result.passed) << r.gate.spec.text << ": " << r.result.detail;

  // Every landmark 3 px off fails the mean (2 px), one 15 px off fails the
  // max (10 px); an inf fails even where IoU would not see it.
  npy::Array shifted = landmarks;
  for (int i = 0; i < 8; ++i) shifted.as<float>()[i] += 3;
  results = ApplyTaskGates(gates, {mask, landmarks}, {mask, shifted});
  EXPECT_FALSE(results[1].result.passed);
  EXPECT_TRUE(results[2].result.passed);
  landmarks_drift.as<float>()[3] = 165;
  mask_drift.as<float>()[0] = std::numeric_limits<float>::infinity();
  results = ApplyTaskGates(gates, {mask, landmarks}, {mask_drift, landmarks_drift});
  EXPECT_FALSE(results[0].result.passed);
  EXPECT_TRUE(results[0].new_nonfinite);
  EXPECT_FALSE(results[2].result.passed);
}

}  // namespace
}  // namespace gpuclean::analyze
