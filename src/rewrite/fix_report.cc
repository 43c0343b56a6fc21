// The before/after summary `gpuclean fix` prints (text) and writes (--json).
#include <fmt/format.h>

#include "gpuclean/rewrite.h"

namespace gpuclean::rewrite {
namespace {

std::string Counts(const lint::Report& r) {
  return fmt::format("{} error(s), {} warning(s), {} info", r.count(lint::Severity::kError),
                     r.count(lint::Severity::kWarning), r.count(lint::Severity::kInfo));
}

nlohmann::json DeltaJson(const OutputDelta& d) {
  return {{"output", d.output},
          {"max_abs_diff", d.max_abs_diff},
          {"max_abs_ref", d.max_abs_ref},
          {"allowed", d.allowed},
          {"paired", d.paired}};
}

nlohmann::json ResidencyJson(const lint::Report& r) {
  if (r.residency.empty()) return nullptr;
  const lint::SubgraphResidency& s = r.residency[0];
  return {{"nodes", s.nodes}, {"gpu_nodes", s.gpu_nodes}, {"partitions", s.partitions}};
}

nlohmann::json LintJson(const lint::Report& r) {
  nlohmann::json findings = nlohmann::json::array();
  for (const lint::Finding& f : r.findings)
    findings.push_back({{"rule", f.rule},
                        {"severity", lint::SeverityName(f.severity)},
                        {"node", f.node},
                        {"op", f.op},
                        {"fix_pass", f.fix_pass}});
  return {{"errors", r.count(lint::Severity::kError)},
          {"warnings", r.count(lint::Severity::kWarning)},
          {"findings", findings},
          {"residency", ResidencyJson(r)}};
}

std::string Worst(const std::vector<OutputDelta>& deltas) {
  std::string out;
  for (const OutputDelta& d : deltas)
    out += fmt::format("{}{} max |diff| {:.3g} (allowed {:.3g}, max |ref| {:.3g}{})", out.empty() ? "" : "; ", d.output,
                       d.max_abs_diff, d.allowed, d.max_abs_ref,
                       d.paired.empty() ? "" : "; by position - rows paired as a selection's near-ties: " + d.paired);
  return out;
}

std::string Where(const lint::Finding& f) {
  return f.node >= 0 ? fmt::format("node {} {}", f.node, f.op) : std::string("whole graph");
}

}  // namespace

nlohmann::json ToJson(const FixResult& result) {
  nlohmann::json passes = nlohmann::json::array();
  for (const PassOutcome& p : result.passes) {
    nlohmann::json sites = nlohmann::json::array(), deltas = nlohmann::json::array();
    for (const Site& s : p.sites) sites.push_back({{"node", s.node}, {"op", s.op}, {"what", s.what}});
    for (const OutputDelta& d : p.deltas) deltas.push_back(DeltaJson(d));
    passes.push_back({{"id", p.id},
                      {"exactness", ExactnessName(p.exactness)},
                      {"bound", p.bound},
                      {"sites", sites},
                      {"deltas", deltas},
                      {"proven", p.proven},
                      {"failure", p.failure}});
  }
  nlohmann::json host = nlohmann::json::array(), total = nlohmann::json::array();
  for (const HostInput& h : result.host_inputs) host.push_back({{"name", h.name}, {"shape", h.value.shape}});
  for (const OutputDelta& d : result.total) total.push_back(DeltaJson(d));
  nlohmann::json remaining = nlohmann::json::array();
  for (const Remaining& r : result.remaining)
    remaining.push_back({{"rule", r.finding.rule},
                         {"node", r.finding.node},
                         {"op", r.finding.op},
                         {"cause", RemainingCauseName(r.cause)},
                         {"pass", r.pass},
                         {"why", r.why}});
  return {{"ok", result.ok},
          {"proven", result.proven},
          {"failure", result.failure},
          {"remaining", remaining},
          {"changed_sites", result.changed_sites()},
          {"passes", passes},
          {"not_applied", result.not_applied},
          {"host_inputs", host},
          {"outputs_vs_original", total},
          {"lint_before", LintJson(result.before)},
          {"lint_after", LintJson(result.after)}};
}

std::string RenderText(const FixResult& result, const lint::Matrix& matrix) {
  std::string out;
  if (result.passes.empty()) out += "no pass to apply: lint names no automatic rewrite for this model\n";
  for (const PassOutcome& p : result.passes) {
    if (p.sites.empty()) {
      out += fmt::format("  {:<26} no match\n", p.id);
      continue;
    }
    out += fmt::format("  {:<26} {} (bound {:.3g}), {} site(s): {}\n", p.id, ExactnessName(p.exactness), p.bound,
                       p.sites.size(), p.proven ? "proven" : "NOT proven");
    // Long lists (one site per layer) keep the first few; --format json has all.
    constexpr size_t kShown = 6;
    for (size_t i = 0; i < p.sites.size() && i < kShown; ++i)
      out += fmt::format("      node {} {}: {}\n", p.sites[i].node, p.sites[i].op, p.sites[i].what);
    if (p.sites.size() > kShown)
      out += fmt::format("      ... and {} more (--format json lists all)\n", p.sites.size() - kShown);
    if (!p.deltas.empty()) out += "      " + Worst(p.deltas) + "\n";
  }
  for (const std::string& n : result.not_applied) out += "  not applied: " + n + "\n";
  for (const HostInput& h : result.host_inputs)
    out += fmt::format("  host input: {} (fed from a .npy written beside the model)\n", h.name);
  out += fmt::format("lint ({}): {}", matrix.target, Counts(result.before));
  if (!result.after.residency.empty() || result.proven) out += " -> " + Counts(result.after);
  out += "\n";
  if (!result.before.residency.empty()) {
    out += "  before: " + lint::PredictedLine(result.before.residency[0]) + "\n";
    if (!result.after.residency.empty()) out += "  after:  " + lint::PredictedLine(result.after.residency[0]) + "\n";
  }
  if (!result.total.empty()) out += "outputs vs original: " + Worst(result.total) + "\n";
  if (!result.remaining.empty()) {
    out += fmt::format("remaining lint errors ({}), and why no pass removed them:\n", result.remaining.size());
    // Fixture-size models can keep dozens; --format json has all.
    constexpr size_t kShown = 12;
    for (size_t i = 0; i < result.remaining.size() && i < kShown; ++i) {
      const Remaining& r = result.remaining[i];
      out += fmt::format("  {} {} [{}]: {}\n", Where(r.finding), r.finding.rule, RemainingCauseName(r.cause), r.why);
    }
    if (result.remaining.size() > kShown)
      out += fmt::format("  ... and {} more (--format json lists all)\n", result.remaining.size() - kShown);
  }
  if (!result.proven)
    out += "proof failed: " + result.failure + "\n";
  else if (!result.ok)
    out += "not fixed: " + result.failure + "\n";
  return out;
}

}  // namespace gpuclean::rewrite
