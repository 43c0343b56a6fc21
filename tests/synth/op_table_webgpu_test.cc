// ctest-labels: litert webgpu
// Every op in the op table (src/ir/ops.def) as its graph (synth::OpGraph) on LiteRT.js's
// real WebGPU delegate, in ONE residency-only batch, held against what lint
// predicts for mldrift-webgpu@2.5.3. An op the matrix has no entry for is
// counted off the GPU; where the delegate takes it, the matrix lacks a
// measured entry (data), which this test names.
#include <gtest/gtest.h>

#include <iostream>

#include "gpuclean/format.h"
#include "gpuclean/lint.h"
#include "gpuclean/op_table.h"
#include "gpuclean/probe.h"
#include "gpuclean/synth.h"
#include "support/op_graphs.h"
#include "support/test_support.h"

namespace gpuclean::synth {
namespace {

TEST(OpTableWebGpu, EveryPlainOpGraphAgreesWithTheWebGpuMatrix) {
  testing::TempDir dir;
  const lint::Matrix webgpu = lint::LoadMatrix(testing::SourceDir() + "/data/compat", "mldrift-webgpu@2.5.3");
  testing::OpGraphBatch batch = testing::OpGraphRequests(dir, probe::Runtime::kLiteRtWebGpu);
  for (probe::ProbeRequest& r : batch.requests) r.residency_only = true;
  const auto& [requests, models, names, no_graph] = batch;
  const std::vector<probe::ProbeResult> results = probe::RunProbes(requests);
  ASSERT_EQ(results.size(), requests.size());
  int measured = 0;
  std::string unmeasured;
  for (size_t i = 0; i < results.size(); ++i) {
    const probe::ProbeResult& r = results[i];
    if (!r.ok || !r.residency.gpu_ops || !r.residency.total_ops) {
      unmeasured += "\n  " + names[i] + ": " + (r.ok ? "no residency in the log" : r.error.substr(0, 160));
      continue;
    }
    ++measured;
    const lint::Report report = lint::Lint(models[i], webgpu);
    const lint::SubgraphResidency& predicted = report.residency[0];
    EXPECT_TRUE(predicted.gpu_nodes == *r.residency.gpu_ops && predicted.nodes == *r.residency.total_ops)
        << names[i] << ": lint " << lint::PredictedLine(predicted) << ", measured " << probe::Summarize(r.residency)
        << (r.residency.unsupported.empty() ? "" : " (" + r.residency.unsupported[0].reason + ")");
  }
  std::cout << "op-table WebGPU batch: " << requests.size() << " ops measured " << measured
            << "; no plain graph:" << no_graph << "; not measurable (load or compile failed):" << unmeasured << "\n";
  EXPECT_GE(measured, static_cast<int>(requests.size()) - 1) << unmeasured;
}

}  // namespace
}  // namespace gpuclean::synth
