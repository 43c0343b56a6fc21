// Lint: match every node against the target's matrix, run the structural
// rules the matrix configures, predict residency.
#include <algorithm>

#include "gpuclean/lint.h"
#include "lint/graph_view.h"
#include "lint/residency.h"
#include "lint/rules/rule.h"

namespace gpuclean::lint {

namespace {

const Entry& NoEntry() {
  static const Entry entry = [] {
    Entry e;
    e.id = "no-entry";
    e.op = "*";
    e.status = Status::kUnknown;
    e.provenance = "none";
    e.consequence = "not counted on the GPU";
    return e;
  }();
  return entry;
}

std::string NoEntryWhy(const std::string& target, const std::string& op) {
  return target + "'s matrix has no entry for " + op +
         " under these constraints (not measured, not read from source): counted off the GPU in the prediction";
}

std::vector<int> NodeTensors(const ir::Op& op) {
  std::vector<int> tensors;
  for (int t : op.inputs)
    if (t >= 0) tensors.push_back(t);
  for (int t : op.outputs)
    if (t >= 0) tensors.push_back(t);
  return tensors;
}

}  // namespace

int Report::count(Severity severity) const {
  return static_cast<int>(
      std::count_if(findings.begin(), findings.end(), [&](const Finding& f) { return f.severity == severity; }));
}

Report Lint(const ir::Model& model, const Matrix& matrix) {
  Report report;
  report.model = model.source;
  report.target = matrix.target;
  for (int s = 0; s < static_cast<int>(model.subgraphs.size()); ++s) {
    const ir::Subgraph& g = model.subgraphs[s];
    GraphView view(g);
    const int n = static_cast<int>(g.ops.size());
    std::vector<Status> status(n, Status::kUnknown);
    std::vector<bool> folded(n, false);
    for (int node = 0; node < n; ++node) {
      const std::string name = g.ops[node].name();
      const Entry* best = nullptr;
      std::vector<const Entry*> cross_cutting;
      for (const Entry& entry : matrix.entries) {
        if (entry.op == "*") {
          if (Matches(view, node, entry.when)) cross_cutting.push_back(&entry);
        } else if (entry.op == name && (!best || entry.specificity() >= best->specificity()) &&
                   Matches(view, node, entry.when)) {
          best = &entry;  // ties: the later (more derived) entry wins
        }
      }
      const Entry& verdict = best ? *best : NoEntry();
      status[node] = verdict.status;
      folded[node] = best && best->folded;
      // A cross-cutting entry that decides the node (a rejection of every
      // unlisted custom op, say) answers what a missing op entry would ask.
      const bool decided_elsewhere = !best && std::any_of(cross_cutting.begin(), cross_cutting.end(),
                                                          [](const Entry* e) { return !RunsOnAccelerator(e->status); });
      if ((verdict.status != Status::kDelegated || verdict.params.contains("severity")) && !decided_elsewhere)
        report.findings.push_back(MakeFinding(view, s, node, NodeTensors(g.ops[node]), verdict,
                                              best ? verdict.why : NoEntryWhy(matrix.target, name)));
      for (const Entry* entry : cross_cutting) {
        report.findings.push_back(MakeFinding(view, s, node, NodeTensors(g.ops[node]), *entry, entry->why));
        if (StatusRank(entry->status) > StatusRank(status[node])) status[node] = entry->status;
        if (!RunsOnAccelerator(entry->status)) folded[node] = false;
      }
    }
    for (const Entry& config : matrix.rules) {
      const RuleDef* rule = FindStructuralRule(config.id);
      if (!rule) continue;
      RuleContext context{view, s, config, report.findings, status};
      rule->run(context);
    }
    report.residency.push_back(PredictResidency(s, g, status, folded, matrix.residency));
    report.node_status.push_back(std::move(status));
  }
  std::stable_sort(report.findings.begin(), report.findings.end(), [](const Finding& a, const Finding& b) {
    if (a.severity != b.severity) return a.severity > b.severity;
    if (a.subgraph != b.subgraph) return a.subgraph < b.subgraph;
    return a.node < b.node;
  });
  return report;
}

}  // namespace gpuclean::lint
