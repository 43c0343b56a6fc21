// A host cut makes new graph outputs (the values the host steps read), and
// an output can break a GPU rule the monolith kept: a [1,N,C] token tensor
// that is both an output and read inside the graph is corrupted on the
// GPU. Each graph therefore goes through lint and fix for the target, as a
// converted model does; host inputs a rewrite adds become pipeline
// constants.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gpuclean/rewrite.h"
#include "gpuclean/split.h"
#include "split/split_internal.h"

namespace gpuclean::split {

std::vector<GraphCleanup> CleanGraphs(HostCut& cut, const std::string& target) {
  std::vector<GraphCleanup> report;
  const std::string stem =
      cut.graphs.empty() ? "graph" : std::filesystem::path(cut.graphs.front().first).stem().stem().string();
  for (pipeline::Stage& stage : cut.spec.stages) {
    // CPU graphs run on LiteRT's CPU path: no GPU rule applies to them.
    if (stage.kind != pipeline::Stage::Kind::kGraph || stage.placement == "cpu") continue;
    auto graph =
        std::find_if(cut.graphs.begin(), cut.graphs.end(), [&](const auto& g) { return g.first == stage.graph; });
    if (graph == cut.graphs.end()) ThrowInternal("host cut: no graph " + stage.graph);
    rewrite::FixOptions options;
    options.target = target;
    GraphCleanup c;
    c.graph = stage.graph;
    rewrite::FixResult fix;
    try {
      fix = rewrite::Fix(graph->second, options);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::kUnsupported) throw;
      // The interpreter cannot run this graph (a custom op it lacks), so no
      // rewrite can be proven on it: lint only, the graph stays as cut.
      const std::string dir = (std::filesystem::path(lint::DefaultDataDir()) / "compat").string();
      c.errors_before = c.errors_after =
          lint::Lint(graph->second, lint::LoadMatrix(dir, target)).count(lint::Severity::kError);
      c.failure = e.what();
      report.push_back(std::move(c));
      continue;
    }
    c.errors_before = fix.before.count(lint::Severity::kError);
    c.errors_after = fix.after.count(lint::Severity::kError);
    for (const rewrite::PassOutcome& p : fix.passes)
      if (p.proven && !p.sites.empty()) c.passes.push_back(fmt::format("{} ({} site(s))", p.id, p.sites.size()));
    for (const rewrite::Remaining& r : fix.remaining)
      c.remaining.push_back(fmt::format("node {} {} [{}]: {}", r.finding.node, r.finding.op, r.finding.rule, r.why));
    if (!fix.proven) {
      c.failure = fix.failure;
      c.errors_after = c.errors_before;
      report.push_back(std::move(c));
      continue;
    }
    if (fix.changed_sites() > 0) {
      const ir::Subgraph& before = graph->second.main();
      const ir::Subgraph& after = fix.model.main();
      if (after.outputs.size() != before.outputs.size() || after.inputs.size() < before.inputs.size())
        ThrowInternal(fmt::format("fixing {} changed its outputs", stage.graph));
      for (size_t k = before.inputs.size(); k < after.inputs.size(); ++k) {
        const std::string& name = after.tensors[after.inputs[k]].name;
        auto host = std::find_if(fix.host_inputs.begin(), fix.host_inputs.end(),
                                 [&](const rewrite::HostInput& h) { return h.name == name; });
        if (host == fix.host_inputs.end()) ThrowInternal(fmt::format("fixing {} added input '{}'", stage.graph, name));
        const std::string value = stage.name + ":" + name;
        const std::string file = fmt::format("{}.const.{}.npy", stem, internal::FileSafe(value));
        stage.inputs.push_back(value);
        cut.spec.constants.push_back({value, file});
        cut.constants.emplace_back(file, host->value);
      }
      stage.ops = static_cast<int>(after.ops.size());
      graph->second = fix.model;
    }
    report.push_back(std::move(c));
  }
  return report;
}

std::string DescribeCleanup(const std::vector<GraphCleanup>& cleanup, const std::string& target) {
  std::string out;
  for (const GraphCleanup& c : cleanup) {
    out += fmt::format("  lint {} for {}: {} error(s) -> {}", c.graph, target, c.errors_before, c.errors_after);
    if (!c.passes.empty()) out += fmt::format("  (fixed: {})", fmt::join(c.passes, ", "));
    out += "\n";
    if (!c.failure.empty()) out += "    not fixed: " + c.failure + "\n";
    for (const std::string& r : c.remaining) out += "    left: " + r + "\n";
  }
  return out;
}

int ErrorsLeft(const std::vector<GraphCleanup>& cleanup) {
  int n = 0;
  for (const GraphCleanup& c : cleanup) n += c.errors_after;
  return n;
}

std::optional<int> CompileCeiling(const std::string& target) {
  const std::string dir = (std::filesystem::path(lint::DefaultDataDir()) / "compat").string();
  const lint::Matrix matrix = lint::LoadMatrix(dir, target);
  const lint::Entry* rule = matrix.Rule("compile-ceiling");
  if (!rule) return std::nullopt;
  return rule->params.value("max_nodes", 1000);
}

std::vector<std::string> SplitAtCompileCeiling(HostCut& cut, int max_nodes) {
  std::vector<std::string> report;
  std::set<std::string> names;
  for (const pipeline::Stage& st : cut.spec.stages) {
    names.insert(st.inputs.begin(), st.inputs.end());
    names.insert(st.outputs.begin(), st.outputs.end());
  }
  const std::string stem =
      cut.graphs.empty() ? "graph" : std::filesystem::path(cut.graphs.front().first).stem().stem().string();
  for (size_t s = 0; s < cut.spec.stages.size(); ++s) {
    const pipeline::Stage stage = cut.spec.stages[s];
    if (stage.kind != pipeline::Stage::Kind::kGraph || stage.placement != "gpu") continue;
    auto graph =
        std::find_if(cut.graphs.begin(), cut.graphs.end(), [&](const auto& g) { return g.first == stage.graph; });
    if (graph == cut.graphs.end()) ThrowInternal("host cut: no graph " + stage.graph);
    const ir::Subgraph& g = graph->second.main();
    int nodes = 0;
    for (const ir::Op& op : g.ops)
      nodes += !(op.code == tfl::BuiltinOperator_DEQUANTIZE && !op.inputs.empty() && op.inputs[0] >= 0 &&
                 g.tensors[op.inputs[0]].is_const());
    if (nodes <= max_nodes) continue;
    // The graph's own inputs and outputs keep the spec's value names.
    std::map<int, std::string> value_of;
    for (size_t k = 0; k < g.inputs.size(); ++k) value_of[g.inputs[k]] = stage.inputs.at(k);
    for (size_t k = 0; k < g.outputs.size(); ++k) value_of[g.outputs[k]] = stage.outputs.at(k);
    auto name_of = [&](int tensor) {
      if (auto it = value_of.find(tensor); it != value_of.end()) return it->second;
      std::string name = g.tensors[tensor].name.empty() ? fmt::format("tensor#{}", tensor) : g.tensors[tensor].name;
      if (names.count(name)) name = fmt::format("{}#{}", name, tensor);
      names.insert(name);
      value_of[tensor] = name;
      return name;
    };
    const std::vector<Part> parts = CutByOrder(graph->second, max_nodes - max_nodes / 10);
    std::vector<pipeline::Stage> replaced;
    std::vector<std::pair<std::string, ir::Model>> models;
    for (size_t p = 0; p < parts.size(); ++p) {
      pipeline::Stage st;
      st.name = fmt::format("{}_{}", stage.name, p + 1);
      st.graph = fmt::format("{}.{}.tflite", stem, st.name);
      st.placement = "gpu";
      st.ops = parts[p].ops;
      for (int t : parts[p].input_tensors) st.inputs.push_back(name_of(t));
      for (int t : parts[p].output_tensors) st.outputs.push_back(name_of(t));
      replaced.push_back(st);
      models.emplace_back(st.graph, parts[p].model);
    }
    report.push_back(fmt::format("{} ({} compute nodes) split into {} GPU graphs under the compile ceiling of {}",
                                 stage.graph, nodes, parts.size(), max_nodes));
    cut.graphs.erase(graph);
    cut.graphs.insert(cut.graphs.end(), models.begin(), models.end());
    cut.spec.stages.erase(cut.spec.stages.begin() + static_cast<std::ptrdiff_t>(s));
    cut.spec.stages.insert(cut.spec.stages.begin() + static_cast<std::ptrdiff_t>(s), replaced.begin(), replaced.end());
    s += replaced.size() - 1;
  }
  return report;
}

}  // namespace gpuclean::split
