#include <algorithm>

#include "lint/rules/rule.h"

namespace gpuclean::lint {

const std::vector<RuleDef>& StructuralRules() {
  static const std::vector<RuleDef> rules = {
      {"add-output-alias", "ADD of two runtime tensors that is a graph output and also consumed", RunAddOutputAlias},
      {"token-output-fanout", "rank-3 token tensor that is a graph output and also consumed", RunTokenOutputFanout},
      {"layerscale-after-fc", "FULLY_CONNECTED 2-D output followed by a broadcast MUL (LayerScale)",
       RunLayerScaleAfterFc},
      {"reduce-extent", "multi-axis MEAN/SUM whose reduced extent exceeds a threshold", RunReduceExtent},
      {"large-constant", "large baked constant feeding a compute chain (not a weight slot)", RunLargeConstant},
      {"compile-ceiling", "graph larger than the whole-graph compile ceiling", RunCompileCeiling},
  };
  return rules;
}

const RuleDef* FindStructuralRule(std::string_view id) {
  const auto& rules = StructuralRules();
  auto it = std::find_if(rules.begin(), rules.end(), [&](const RuleDef& r) { return id == r.id; });
  return it == rules.end() ? nullptr : &*it;
}

int StatusRank(Status status) {
  switch (status) {
    case Status::kDelegated: return 0;
    case Status::kPartial: return 1;
    case Status::kUnknown: return 2;
    case Status::kIncorrect: return 3;
    case Status::kFallback: return 4;
    case Status::kRejected: return 5;
  }
  return 2;
}

Severity DefaultSeverity(Status status) {
  switch (status) {
    case Status::kRejected:
    case Status::kIncorrect: return Severity::kError;
    case Status::kFallback:
    case Status::kPartial:
    case Status::kUnknown: return Severity::kWarning;
    case Status::kDelegated: return Severity::kInfo;
  }
  return Severity::kWarning;
}

Finding MakeFinding(const GraphView& view, int subgraph, int node, const std::vector<int>& tensors, const Entry& entry,
                    const std::string& why) {
  Finding f;
  f.rule = entry.id;
  f.status = entry.status;
  const std::string severity = entry.params.value("severity", "");
  f.severity = severity == "error"     ? Severity::kError
               : severity == "warning" ? Severity::kWarning
               : severity == "info"    ? Severity::kInfo
                                       : DefaultSeverity(entry.status);
  f.subgraph = subgraph;
  f.node = node;
  f.op = node >= 0 ? view.graph.ops[node].name() : "";
  for (int t : tensors) f.tensors.push_back(view.TensorName(t));
  f.why = why;
  f.consequence = entry.consequence.empty() ? (entry.status == Status::kIncorrect ? "wrong-numbers"
                                               : RunsOnAccelerator(entry.status)  ? "none"
                                                                                  : "rejected")
                                            : entry.consequence;
  f.hints = entry.hints;
  if (!entry.hints.empty()) {
    f.fix_pass = entry.hints.front();
    if (const PassInfo* pass = FindPass(f.fix_pass)) f.fix = pass->summary;
  }
  f.provenance = entry.provenance;
  f.evidence = entry.evidence;
  return f;
}

double RuleContext::Param(const char* name, double fallback) const {
  const auto it = config.params.find(name);
  return it != config.params.end() && it->is_number() ? it->get<double>() : fallback;
}

void RuleContext::Report(int node, const std::vector<int>& tensors, const std::string& why) const {
  findings.push_back(
      MakeFinding(view, subgraph, node, tensors, config, why.empty() ? config.why : why + ". " + config.why));
  if (node >= 0 && StatusRank(config.status) > StatusRank(node_status[node])) node_status[node] = config.status;
}

}  // namespace gpuclean::lint
