#pragma once
// Structural rules: patterns over several nodes (or the whole graph) that an
// op entry cannot express. Each rule lives in its own file; its verdict,
// evidence, fix and thresholds come from the target's matrix ("rules").
#include <string>
#include <vector>

#include "gpuclean/lint.h"
#include "gpuclean/shapes.h"
#include "lint/graph_view.h"

namespace gpuclean::lint {

struct RuleContext {
  const GraphView& view;
  int subgraph;
  const Entry& config;
  std::vector<Finding>& findings;
  std::vector<Status>& node_status;

  // A threshold from config.params, or `fallback` when the matrix gives none.
  double Param(const char* name, double fallback) const;
  // Records a finding at `node` (-1: the whole graph) with the config's verdict.
  void Report(int node, const std::vector<int>& tensors, const std::string& why) const;
};

struct RuleDef {
  const char* id;
  const char* summary;
  void (*run)(const RuleContext& context);
};

const std::vector<RuleDef>& StructuralRules();
const RuleDef* FindStructuralRule(std::string_view id);

// Registered rules, one per file.
void RunAddOutputAlias(const RuleContext& context);
void RunTokenOutputFanout(const RuleContext& context);
void RunLayerScaleAfterFc(const RuleContext& context);
void RunReduceExtent(const RuleContext& context);
void RunLargeConstant(const RuleContext& context);
void RunCompileCeiling(const RuleContext& context);

// Findings, severity and status worst-of, shared with the op matcher.
Severity DefaultSeverity(Status status);
Finding MakeFinding(const GraphView& view, int subgraph, int node, const std::vector<int>& tensors, const Entry& entry,
                    const std::string& why);
// Higher is worse for residency and reporting.
int StatusRank(Status status);

}  // namespace gpuclean::lint
