// ctest-labels: litert webgpu
// The rule-edge probes of mldrift-cl@2.2.0 (rules read from ML Drift's
// source) compiled on LiteRT.js's real WebGPU delegate in ONE residency-only
// batch, and held against what lint predicts for mldrift-webgpu@2.5.3: where
// the delegate and the WebGPU matrix disagree, the matrix is wrong and gets
// a measured entry (data), never this test.
#include <gtest/gtest.h>

#include <chrono>
#include <iostream>

#include "gpuclean/format.h"
#include "gpuclean/lint.h"
#include "gpuclean/probe.h"
#include "gpuclean/synth.h"
#include "support/test_support.h"

namespace gpuclean::synth {
namespace {

TEST(RuleEdgeWebGpu, WebGpuMatrixAgreesWithTheDelegateOnEveryRuleEdgeProbe) {
  testing::TempDir dir;
  const std::string compat = testing::SourceDir() + "/data/compat";
  const RuleEdgeSet set = RuleEdgeProbes(lint::LoadMatrix(compat, "mldrift-cl@2.2.0"));
  const lint::Matrix webgpu = lint::LoadMatrix(compat, "mldrift-webgpu@2.5.3");
  std::vector<probe::ProbeRequest> requests;
  std::vector<const ir::Model*> models;
  std::vector<std::string> names;
  for (const RuleEdgeProbe& p : set.probes)
    for (const auto& [side, model] : {std::pair{".inside", &p.inside}, std::pair{".past", &p.past}}) {
      probe::ProbeRequest r;
      r.model_path = dir.file(p.entry + side + ".tflite");
      format::WriteModel(*model, r.model_path);
      r.runtime = probe::Runtime::kLiteRtWebGpu;
      r.residency_only = true;
      r.out_dir = dir.file(p.entry + side);
      requests.push_back(r);
      models.push_back(model);
      names.push_back(p.entry + side);
    }
  const auto start = std::chrono::steady_clock::now();
  const std::vector<probe::ProbeResult> results = probe::RunProbes(requests);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(results.size(), requests.size());
  int measured = 0, agree = 0;
  std::string unmeasured;
  for (size_t i = 0; i < results.size(); ++i) {
    const probe::ProbeResult& r = results[i];
    if (!r.ok || !r.residency.gpu_ops || !r.residency.total_ops) {
      unmeasured += "\n  " + names[i] + ": " + (r.ok ? "no residency in the log" : r.error);
      continue;
    }
    ++measured;
    const lint::Report report = lint::Lint(*models[i], webgpu);
    const lint::SubgraphResidency& predicted = report.residency[0];
    const bool same = predicted.gpu_nodes == *r.residency.gpu_ops && predicted.nodes == *r.residency.total_ops;
    agree += same;
    EXPECT_TRUE(same) << names[i] << ": lint " << lint::PredictedLine(predicted) << ", measured "
                      << probe::Summarize(r.residency);
  }
  std::cout << "rule-edge WebGPU batch: " << requests.size() << " probes in " << seconds << " s; " << measured
            << " measured, lint agrees on " << agree << "; not measurable:" << unmeasured << "\n";
  // The rest fail to load or compile in LiteRT.js before it reports
  // residency: most are op versions above those it registers, the others
  // graphs with bool inputs, which it does not take.
  EXPECT_GE(measured, static_cast<int>(requests.size()) / 2) << unmeasured;
}

}  // namespace
}  // namespace gpuclean::synth
