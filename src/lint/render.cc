// Report renderings: JSON (the documented shape, docs/lint.md), text grouped
// by severity, Markdown for a model recipe README, SARIF 2.1.0 for CI.
#include <filesystem>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "gpuclean/lint.h"

namespace gpuclean::lint {

using nlohmann::json;

namespace {

std::string Where(const Finding& f) {
  return f.node < 0 ? fmt::format("subgraph {}", f.subgraph) : fmt::format("{}:{}", f.subgraph, f.node);
}

std::string KnownMismatch(const Report& report, const Matrix& matrix) {
  const std::string file = std::filesystem::path(report.model).filename().string();
  auto it = matrix.known_mismatches.find(file);
  return it == matrix.known_mismatches.end() ? "" : it->get<std::string>();
}

std::string EvidenceText(const Finding& f) {
  if (f.provenance == "none") return "no evidence";
  return fmt::format("{}: {} ({}, {})", f.provenance, f.evidence.source, f.evidence.runtime, f.evidence.date);
}

// Findings with the same severity, rule and op, in report order.
struct Group {
  std::vector<const Finding*> items;
};
std::vector<Group> GroupFindings(const Report& report) {
  std::vector<Group> groups;
  std::map<std::tuple<int, std::string, std::string>, size_t> index;
  for (const Finding& f : report.findings) {
    auto key = std::make_tuple(static_cast<int>(f.severity), f.rule, f.op);
    auto [it, inserted] = index.emplace(key, groups.size());
    if (inserted) groups.emplace_back();
    groups[it->second].items.push_back(&f);
  }
  return groups;
}

std::string NodeList(const Group& group, size_t limit) {
  std::string nodes;
  for (size_t i = 0; i < group.items.size() && i < limit; ++i) nodes += (i ? ", " : "") + Where(*group.items[i]);
  if (group.items.size() > limit) nodes += fmt::format(", ... ({} in all)", group.items.size());
  return nodes;
}

std::string Summary(const Report& report) {
  return fmt::format("{} error(s), {} warning(s), {} info", report.count(Severity::kError),
                     report.count(Severity::kWarning), report.count(Severity::kInfo));
}

}  // namespace

json ToJson(const Report& report, const Matrix& matrix) {
  json out;
  out["model"] = report.model;
  out["target"] = report.target;
  out["runtime"] = matrix.runtime;
  out["matrix_chain"] = matrix.chain;
  out["summary"] = {{"errors", report.count(Severity::kError)},
                    {"warnings", report.count(Severity::kWarning)},
                    {"info", report.count(Severity::kInfo)}};
  out["residency"] = json::array();
  for (const SubgraphResidency& r : report.residency) {
    json partitions = json::array();
    for (const auto& p : r.partition_nodes)
      partitions.push_back({{"first_node", p.front()}, {"last_node", p.back()}, {"nodes", p.size()}});
    out["residency"].push_back({{"subgraph", r.subgraph},
                                {"nodes", r.nodes},
                                {"gpu_nodes", r.gpu_nodes},
                                {"partitions", r.partitions},
                                {"all_partitions", r.all_partitions},
                                {"unknown_nodes", r.unknown_nodes},
                                {"if_accepted_gpu_nodes", r.if_accepted_gpu_nodes},
                                {"if_accepted_partitions", r.if_accepted_partitions},
                                {"predicted", PredictedLine(r)},
                                {"runtime_log", RuntimeLogLine(r, matrix.residency)},
                                {"delegated_partitions", partitions}});
  }
  if (std::string mismatch = KnownMismatch(report, matrix); !mismatch.empty()) out["known_mismatch"] = mismatch;
  out["findings"] = json::array();
  for (const Finding& f : report.findings) {
    out["findings"].push_back(
        {{"rule", f.rule},
         {"severity", SeverityName(f.severity)},
         {"status", StatusName(f.status)},
         {"subgraph", f.subgraph},
         {"node", f.node},
         {"op", f.op},
         {"tensors", f.tensors},
         {"why", f.why},
         {"consequence", f.consequence},
         {"fix", {{"pass", f.fix_pass}, {"summary", f.fix}}},
         {"provenance", f.provenance},
         {"evidence", {{"date", f.evidence.date}, {"runtime", f.evidence.runtime}, {"source", f.evidence.source}}}});
  }
  return out;
}

std::string RenderText(const Report& report, const Matrix& matrix) {
  std::ostringstream out;
  out << "model   " << report.model << "\n";
  out << "target  " << report.target << (matrix.runtime.empty() ? "" : " (" + matrix.runtime + ")") << "\n";
  out << "matrix  " << ProvenanceSummary(matrix) << "\n";
  Severity current = Severity::kInfo;
  bool first = true;
  for (const Group& group : GroupFindings(report)) {
    const Finding& f = *group.items.front();
    if (first || f.severity != current) {
      const char* title = f.severity == Severity::kError     ? "errors"
                          : f.severity == Severity::kWarning ? "warnings"
                                                             : "info";
      out << "\n" << title << ":\n";
      current = f.severity;
      first = false;
    }
    out << fmt::format("  [{}] {}{} at {}\n", f.rule, f.op.empty() ? "graph" : f.op,
                       group.items.size() > 1 ? fmt::format(" x{}", group.items.size()) : "", NodeList(group, 6));
    out << "      why: " << f.why << "\n";
    if (group.items.size() == 1 && !f.tensors.empty()) {
      std::string names;
      for (const auto& t : f.tensors) names += (names.empty() ? "" : ", ") + t;
      out << "      tensors: " << names << "\n";
    }
    out << "      consequence: " << f.consequence << " (status " << StatusName(f.status) << ")\n";
    if (!f.fix_pass.empty()) out << "      fix: " << f.fix_pass << " - " << f.fix << "\n";
    out << "      evidence: " << EvidenceText(f) << "\n";
  }
  out << "\n";
  for (const SubgraphResidency& r : report.residency) {
    out << (report.residency.size() > 1 ? fmt::format("subgraph {}: ", r.subgraph) : "") << PredictedLine(r) << "\n";
    out << "  runtime would log: " << RuntimeLogLine(r, matrix.residency) << "\n";
  }
  if (std::string mismatch = KnownMismatch(report, matrix); !mismatch.empty())
    out << "known mismatch: " << mismatch << "\n";
  out << "summary: " << Summary(report) << "\n";
  return out.str();
}

std::string RenderMarkdown(const Report& report, const Matrix& matrix) {
  auto cell = [](std::string s) {
    for (size_t p = 0; (p = s.find('|', p)) != std::string::npos; p += 2) s.replace(p, 1, "\\|");
    return s;
  };
  std::ostringstream out;
  out << "## GPU lint: `" << std::filesystem::path(report.model).filename().string() << "` on `" << report.target
      << "`\n\n";
  for (const SubgraphResidency& r : report.residency) out << "- " << PredictedLine(r) << "\n";
  out << "- " << Summary(report) << "\n\n";
  if (report.findings.empty()) {
    out << "No findings.\n";
    return out.str();
  }
  out << "| severity | rule | op | nodes | why | consequence | fix | evidence |\n";
  out << "|---|---|---|---|---|---|---|---|\n";
  for (const Group& group : GroupFindings(report)) {
    const Finding& f = *group.items.front();
    out << "| " << SeverityName(f.severity) << " | `" << f.rule << "` | " << cell(f.op.empty() ? "graph" : f.op)
        << " | " << cell(NodeList(group, 4)) << " | " << cell(f.why) << " | " << f.consequence << " | "
        << (f.fix_pass.empty() ? "" : "`" + f.fix_pass + "`") << " | " << cell(EvidenceText(f)) << " |\n";
  }
  return out.str();
}

json ToSarif(const Report& report, const Matrix& matrix) {
  json rules = json::array();
  std::map<std::string, size_t> rule_index;
  json results = json::array();
  for (const Finding& f : report.findings) {
    if (!rule_index.count(f.rule)) {
      rule_index[f.rule] = rules.size();
      json rule = {{"id", f.rule}, {"shortDescription", {{"text", f.why.substr(0, f.why.find(". "))}}}};
      if (!f.fix_pass.empty()) rule["help"] = {{"text", f.fix_pass + ": " + f.fix}};
      rules.push_back(rule);
    }
    const char* level = f.severity == Severity::kError     ? "error"
                        : f.severity == Severity::kWarning ? "warning"
                                                           : "note";
    std::string message =
        (f.node >= 0 ? fmt::format("{} (node {}:{}): ", f.op, f.subgraph, f.node) : std::string()) + f.why;
    if (!f.fix_pass.empty()) message += " Fix: " + f.fix_pass + " - " + f.fix;
    json location = {{"physicalLocation", {{"artifactLocation", {{"uri", report.model}}}}},
                     {"logicalLocations",
                      {{{"name", f.node >= 0 ? fmt::format("subgraph{}/node{}", f.subgraph, f.node)
                                             : fmt::format("subgraph{}", f.subgraph)},
                        {"kind", "member"}}}}};
    results.push_back({{"ruleId", f.rule},
                       {"ruleIndex", rule_index[f.rule]},
                       {"level", level},
                       {"message", {{"text", message}}},
                       {"locations", json::array({location})},
                       {"properties",
                        {{"status", StatusName(f.status)},
                         {"consequence", f.consequence},
                         {"provenance", f.provenance},
                         {"evidence", f.evidence.source},
                         {"tensors", f.tensors}}}});
  }
  json residency = json::array();
  for (const SubgraphResidency& r : report.residency) residency.push_back(PredictedLine(r));
  return {{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
          {"version", "2.1.0"},
          {"runs",
           {{{"tool", {{"driver", {{"name", "gpuclean"}, {"version", "0.1.0"}, {"rules", rules}}}}},
             {"artifacts", {{{"location", {{"uri", report.model}}}}}},
             {"results", results},
             {"properties", {{"target", report.target}, {"residency", residency}}}}}}};
}

}  // namespace gpuclean::lint
