#pragma once
// What every pass test proves (docs/rewrite.md): the pass matches, the
// rewritten graph gives the original's outputs within the pass's bound on
// our interpreter AND on LiteRT.js, and the lint finding it addresses is gone.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "gpuclean/format.h"
#include "gpuclean/lint.h"
#include "gpuclean/probe.h"
#include "gpuclean/rewrite.h"
#include "support/conformance.h"
#include "support/test_support.h"
#include "support/tflite_names.h"

namespace gpuclean::testing {

struct PassProof {
  ir::Model rewritten;
  rewrite::PassResult result;
};

// Inputs of the rewritten graph: the original's, then each host input's value.
inline std::vector<npy::Array> WithHostInputs(std::vector<npy::Array> inputs, const rewrite::PassResult& result) {
  for (const rewrite::HostInput& h : result.host_inputs) inputs.push_back(h.value);
  return inputs;
}

inline void ExpectWithinBound(const std::vector<npy::Array>& ref, const std::vector<npy::Array>& got, double bound,
                              const std::string& where) {
  ASSERT_EQ(ref.size(), got.size()) << where;
  for (size_t i = 0; i < ref.size(); ++i) {
    ASSERT_EQ(ref[i].shape, got[i].shape) << where << " output " << i;
    const Agreement a = Compare(ref[i], got[i]);
    EXPECT_LE(a.max_abs_diff, bound * std::max(1.0, a.max_abs_ref))
        << where << " output " << i << ": max |ref| " << a.max_abs_ref << ", correlation " << a.correlation;
  }
}

// Applies pass `id` once and proves it on `inputs` (the original graph's
// inputs, in order). `min_sites`: how many matches the graph holds.
inline PassProof ExpectPassProven(const std::string& id, const ir::Model& model, const std::vector<npy::Array>& inputs,
                                  size_t min_sites = 1, const rewrite::PassOptions& options = {}) {
  const rewrite::Pass* pass = rewrite::FindPass(id);
  EXPECT_NE(pass, nullptr) << "no pass " << id;
  if (!pass) return {};
  PassProof proof{model, {}};
  proof.result = pass->Apply(proof.rewritten, options);
  EXPECT_GE(proof.result.sites.size(), min_sites) << id << " matched too little";
  proof.rewritten.Validate();
  const double bound = pass->bound(options);
  const std::vector<npy::Array> rewritten_inputs = WithHostInputs(inputs, proof.result);

  ExpectWithinBound(RunOurs(model, inputs), RunOurs(proof.rewritten, rewritten_inputs), bound,
                    id + " on gpuclean's interpreter");

  TempDir dir;
  const std::string before = dir.file("before.tflite"), after = dir.file("after.tflite");
  format::WriteModel(model, before);
  format::WriteModel(proof.rewritten, after);
  try {
    ExpectWithinBound(RunLiteRt(before, inputs), RunLiteRt(after, rewritten_inputs), bound, id + " on LiteRT.js");
  } catch (const std::exception& e) {
    ADD_FAILURE() << id << ": LiteRT.js: " << e.what();
  }
  return proof;
}

// Findings of rule `rule` in a lint of `model` against `target`.
inline int CountFindings(const ir::Model& model, const std::string& rule,
                         const std::string& target = ::gpuclean::testing::targets::kFieldReports) {
  const lint::Matrix matrix = lint::LoadMatrix(SourceDir() + "/data/compat", target);
  const lint::Report report = lint::Lint(model, matrix);
  int n = 0;
  for (const lint::Finding& f : report.findings) n += f.rule == rule;
  return n;
}

inline void ExpectFindingGone(const ir::Model& before, const ir::Model& after, const std::string& rule,
                              const std::string& target = ::gpuclean::testing::targets::kFieldReports) {
  EXPECT_GT(CountFindings(before, rule, target), 0) << "the original graph should trigger " << rule;
  EXPECT_EQ(CountFindings(after, rule, target), 0) << "the rewritten graph still triggers " << rule;
}

// Worst output correlation of `model` run in fp16-compute against
// `reference` in fp32 (-1 where it is undefined, e.g. a NaN output).
inline double Fp16Correlation(const ir::Model& reference, const ir::Model& model,
                              const std::vector<npy::Array>& inputs) {
  const std::vector<npy::Array> want = RunOurs(reference, inputs);
  const std::vector<npy::Array> got =
      RunOurs(model, inputs, exec::InterpreterOptions{.precision = exec::Precision::kFp16Compute});
  double worst = 1;
  for (size_t i = 0; i < want.size(); ++i) {
    const double c = Compare(want[i], got[i]).correlation;
    worst = std::isnan(c) ? -1 : std::min(worst, c);
  }
  return worst;
}

// Worst output correlation with our fp32 interpreter of each model run on
// LiteRT.js's WebGPU delegate at `precision` ("fp32" | "fp16"), all in one
// probe batch (one Chromium launch). Inputs in each model's input order.
inline std::vector<double> WebGpuCorrelations(const std::vector<ir::Model>& models,
                                              const std::vector<std::vector<npy::Array>>& inputs,
                                              const std::string& precision) {
  TempDir dir;
  std::vector<probe::ProbeRequest> requests;
  for (size_t m = 0; m < models.size(); ++m) {
    probe::ProbeRequest r;
    r.model_path = dir.file("model" + std::to_string(m) + ".tflite");
    format::WriteModel(models[m], r.model_path);
    for (size_t i = 0; i < inputs[m].size(); ++i) {
      const std::string file = dir.file("m" + std::to_string(m) + "_in" + std::to_string(i) + ".npy");
      npy::Write(file, inputs[m][i]);
      r.inputs.push_back({std::to_string(i), file});
    }
    r.runtime = probe::Runtime::kLiteRtWebGpu;
    r.precision = precision;
    r.out_dir = dir.file("out" + std::to_string(m));
    requests.push_back(r);
  }
  const std::vector<probe::ProbeResult> results = probe::RunProbes(requests);
  std::vector<double> worst;
  for (size_t m = 0; m < models.size(); ++m) {
    EXPECT_TRUE(results[m].ok) << results[m].error;
    const std::vector<npy::Array> want = RunOurs(models[m], inputs[m]);
    double w = 1;
    for (size_t k = 0; k < want.size() && k < results[m].outputs.size(); ++k) {
      const double c = Compare(want[k], results[m].outputs[k]).correlation;
      w = std::isnan(c) ? -1 : std::min(w, c);
    }
    worst.push_back(results[m].ok ? w : -1);
  }
  return worst;
}

// The number of ops with this code in the main subgraph.
inline int CountOps(const ir::Model& model, tfl::BuiltinOperator code) {
  int n = 0;
  for (const ir::Op& op : model.main().ops) n += op.code == code;
  return n;
}

}  // namespace gpuclean::testing
