// ctest-labels: litert webgpu
// Issue 4's bar: lint's predicted residency on LiteRT.js 2.5.3 WebGPU equals
// the measured one for every micro-probe. All of them (bad and near-miss)
// compile in ONE probe batch - one Chromium launch, residency only - which
// takes ~16 s here. Where the runtime cannot measure a probe (the model does
// not load), the matrix lists it in known_mismatches with the reason; the
// data is fixed, never this test.
#include <gtest/gtest.h>

#include <chrono>

#include "gpuclean/lint.h"
#include "gpuclean/probe.h"
#include "gpuclean/synth.h"
#include "support/test_support.h"

namespace gpuclean::synth {
namespace {

constexpr const char* kWebGpuTarget = "mldrift-webgpu@2.5.3";

TEST(ProbeResidency, EveryMicroProbeMatchesTheMeasuredWebGpuResidency) {
  testing::TempDir dir;
  const lint::Matrix matrix = lint::LoadMatrix(testing::SourceDir() + "/data/compat", kWebGpuTarget);
  std::vector<const SynthGraph*> graphs = Resolve({"probes"});
  std::vector<probe::ProbeRequest> requests;
  for (const SynthGraph* g : graphs) {
    probe::ProbeRequest r;
    r.model_path = Write(*g, dir.path().string()).model;
    r.runtime = probe::Runtime::kLiteRtWebGpu;
    r.residency_only = true;
    r.out_dir = dir.file(g->name);
    requests.push_back(r);
  }
  const auto start = std::chrono::steady_clock::now();
  const std::vector<probe::ProbeResult> results = probe::RunProbes(requests);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(results.size(), graphs.size());
  std::cout << "probe batch: " << graphs.size() << " micro-probes in " << seconds << " s\n";
  EXPECT_LT(seconds, 120) << "the batch should stay one short Chromium launch";

  int compared = 0;
  for (size_t i = 0; i < graphs.size(); ++i) {
    const SynthGraph& g = *graphs[i];
    const probe::ProbeResult& measured = results[i];
    const lint::Report report = lint::Lint(g.build(), matrix);
    const lint::SubgraphResidency& predicted = report.residency[0];
    const std::string file = g.name + ".tflite";
    if (matrix.known_mismatches.contains(file)) {
      // Listed because nothing can be measured: the model must indeed fail to load.
      EXPECT_FALSE(measured.ok && measured.residency.gpu_ops.has_value())
          << file << " is a known mismatch but now measures " << probe::Summarize(measured.residency)
          << ": record the measured verdict in data/compat/" << kWebGpuTarget << ".json and drop the exception";
      continue;
    }
    ASSERT_TRUE(measured.residency.gpu_ops.has_value() && measured.residency.total_ops.has_value())
        << file << ": no residency measured (" << measured.error << ")";
    EXPECT_EQ(predicted.gpu_nodes, *measured.residency.gpu_ops)
        << file << ": " << lint::PredictedLine(predicted) << " vs measured " << probe::Summarize(measured.residency);
    EXPECT_EQ(predicted.nodes, *measured.residency.total_ops) << file;
    if (measured.residency.partitions) EXPECT_EQ(predicted.partitions, *measured.residency.partitions) << file;
    ++compared;
  }
  EXPECT_EQ(compared, static_cast<int>(graphs.size() - matrix.known_mismatches.size()));
}

}  // namespace
}  // namespace gpuclean::synth
