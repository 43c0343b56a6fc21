#pragma once
// Helpers for the lint tests: matrices from the source tree, findings by rule.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "gpuclean/builder.h"
#include "gpuclean/lint.h"
#include "support/test_support.h"
#include "support/tflite_names.h"

namespace gpuclean::lint::testing {

inline std::string CompatDir() { return gpuclean::testing::SourceDir() + "/data/compat"; }

inline const Matrix& Target(const std::string& id) {
  static std::map<std::string, Matrix> cache;
  auto it = cache.find(id);
  if (it == cache.end()) it = cache.emplace(id, LoadMatrix(CompatDir(), id)).first;
  return it->second;
}

inline Report LintOn(const ir::Model& model, const std::string& target = ::gpuclean::testing::targets::kFieldReports) {
  return Lint(model, Target(target));
}

inline int CountRule(const Report& report, const std::string& rule) {
  return static_cast<int>(
      std::count_if(report.findings.begin(), report.findings.end(), [&](const Finding& f) { return f.rule == rule; }));
}

inline const Finding* FirstOf(const Report& report, const std::string& rule) {
  for (const Finding& f : report.findings)
    if (f.rule == rule) return &f;
  return nullptr;
}

}  // namespace gpuclean::lint::testing
