// ctest-labels: litert webgpu
// Issue 6's bar for the micro-probes: every bad micro-probe that `fix` can
// rewrite becomes a graph the real LiteRT.js 2.5.3 WebGPU delegate takes
// whole (all nodes on the GPU, one partition). Originals and fixed graphs
// compile in ONE probe batch (one Chromium launch, residency only).
#include <gtest/gtest.h>

#include <iostream>

#include "gpuclean/probe.h"
#include "gpuclean/rewrite.h"
#include "gpuclean/synth.h"
#include "support/test_support.h"

namespace gpuclean::rewrite {
namespace {

bool Full(const probe::ProbeResult& r) {
  const probe::Residency& res = r.residency;
  return res.gpu_ops && res.total_ops && *res.gpu_ops == *res.total_ops && (!res.partitions || *res.partitions <= 1);
}

TEST(FixResidency, EveryFixableMicroProbeRunsWhollyOnTheWebGpuDelegate) {
  testing::TempDir dir;
  std::vector<const synth::SynthGraph*> fixable;
  std::vector<probe::ProbeRequest> requests;
  for (const synth::SynthGraph* g : synth::Resolve({"probes"})) {
    if (g->fixed) continue;
    FixOptions options;
    options.target = g->target;
    const FixResult result = Fix(g->build(), options);
    // Probes of findings no pass covers (TOPK, ...) stay unfixed (not ok); every rewrite must prove.
    ASSERT_TRUE(result.proven) << g->name << ": " << result.failure;
    if (result.changed_sites() == 0) continue;
    fixable.push_back(g);
    for (bool fixed : {false, true}) {
      probe::ProbeRequest r;
      r.model_path = dir.file(g->name + (fixed ? ".fixed.tflite" : ".tflite"));
      if (fixed)
        WriteResult(result, r.model_path, false);
      else
        synth::Write(*g, dir.path().string());
      r.runtime = probe::Runtime::kLiteRtWebGpu;
      r.residency_only = true;
      r.out_dir = dir.file(g->name + (fixed ? ".fixed" : ".orig"));
      requests.push_back(r);
    }
  }
  ASSERT_GE(fixable.size(), 1u);
  const std::vector<probe::ProbeResult> results = probe::RunProbes(requests);
  ASSERT_EQ(results.size(), requests.size());
  int improved = 0;
  for (size_t i = 0; i < fixable.size(); ++i) {
    const probe::ProbeResult &before = results[2 * i], &after = results[2 * i + 1];
    const std::string b =
        before.residency.gpu_ops ? probe::Summarize(before.residency) : "not measured: " + before.error;
    const std::string a = after.residency.gpu_ops ? probe::Summarize(after.residency) : "not measured: " + after.error;
    std::cout << fixable[i]->name << ": " << b << "  ->  " << a << "\n";
    EXPECT_TRUE(Full(after)) << fixable[i]->name << " after fix: " << a;
    improved += !Full(before) && Full(after);
  }
  // Most of these probes exist because the delegate declines them; a test
  // where nothing was declined before would prove nothing.
  EXPECT_GE(improved, 4) << "too few probes were partial before the fix";
}

}  // namespace
}  // namespace gpuclean::rewrite
