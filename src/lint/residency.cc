// Residency prediction: which nodes a delegate of the TFLite family takes and
// how it partitions the graph (docs/lint.md, "Residency model").
#include <algorithm>
#include <numeric>

#include "lint/residency.h"

namespace gpuclean::lint {

std::vector<std::vector<int>> PartitionNodes(const ir::Subgraph& g, const std::vector<bool>& supported,
                                             std::vector<bool>* subset_supported) {
  const int n = static_cast<int>(g.ops.size());
  std::vector<bool> ready(g.tensors.size(), true);
  for (const ir::Op& op : g.ops)
    for (int t : op.outputs)
      if (t >= 0) ready[t] = false;
  std::vector<bool> assigned(n, false);
  std::vector<std::vector<int>> subsets;
  int remaining = n;
  // Greedy, as the runtime's partitioner: a subset takes every ready node of
  // its kind in execution order, sweeping until none is left, then the kind
  // flips. The first ready node decides the kind of a new subset.
  while (remaining > 0) {
    std::vector<int> subset;
    int kind = -1;
    for (bool progress = true; progress;) {
      progress = false;
      for (int node = 0; node < n; ++node) {
        if (assigned[node]) continue;
        const ir::Op& op = g.ops[node];
        if (!std::all_of(op.inputs.begin(), op.inputs.end(), [&](int t) { return t < 0 || ready[t]; })) continue;
        if (kind < 0) kind = supported[node] ? 1 : 0;
        if ((supported[node] ? 1 : 0) != kind) continue;
        assigned[node] = true;
        --remaining;
        subset.push_back(node);
        for (int t : op.outputs)
          if (t >= 0) ready[t] = true;
        progress = true;
      }
    }
    if (subset.empty()) break;  // a cycle; Validate() would have refused it
    subsets.push_back(std::move(subset));
    if (subset_supported) subset_supported->push_back(kind == 1);
  }
  return subsets;
}

namespace {

struct Outcome {
  int gpu_nodes = 0;
  int all_partitions = 0;
  std::vector<std::vector<int>> delegated;
};

Outcome Predict(const ir::Subgraph& g, const std::vector<bool>& supported, const std::vector<bool>& folded,
                const ResidencyModel& model) {
  Outcome out;
  const int n = static_cast<int>(g.ops.size());
  if (n == 0) return out;
  bool full = true;
  for (int i = 0; i < n; ++i) full = full && (folded[i] || supported[i]);
  if (full) {
    // Every node is taken, the folded weight DEQUANTIZEs included.
    out.gpu_nodes = n;
    out.all_partitions = 1;
    out.delegated.emplace_back(n);
    std::iota(out.delegated.back().begin(), out.delegated.back().end(), 0);
    return out;
  }
  // Partial delegation: folded DEQUANTIZEs stay on the CPU (a CPU consumer
  // may read them), so they are unsupported for partitioning.
  std::vector<bool> partition_supported(n);
  for (int i = 0; i < n; ++i) partition_supported[i] = supported[i] && !folded[i];
  std::vector<bool> kinds;
  auto subsets = PartitionNodes(g, partition_supported, &kinds);
  std::vector<std::vector<int>> candidates;
  for (size_t i = 0; i < subsets.size(); ++i)
    if (kinds[i]) candidates.push_back(subsets[i]);
  std::stable_sort(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
  if (model.max_delegated_partitions && static_cast<int>(candidates.size()) > *model.max_delegated_partitions)
    candidates.resize(*model.max_delegated_partitions);
  std::vector<bool> chosen(n, false);
  for (const auto& c : candidates) {
    out.gpu_nodes += static_cast<int>(c.size());
    for (int node : c) chosen[node] = true;
  }
  std::sort(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) { return a.front() < b.front(); });
  out.delegated = std::move(candidates);
  out.all_partitions = static_cast<int>(PartitionNodes(g, chosen, nullptr).size());
  return out;
}

}  // namespace

SubgraphResidency PredictResidency(int subgraph, const ir::Subgraph& g, const std::vector<Status>& status,
                                   const std::vector<bool>& folded, const ResidencyModel& model) {
  const int n = static_cast<int>(g.ops.size());
  SubgraphResidency r;
  r.subgraph = subgraph;
  r.nodes = n;
  std::vector<bool> optimistic(n), pessimistic(n);
  for (int i = 0; i < n; ++i) {
    optimistic[i] = RunsOnAccelerator(status[i]);
    pessimistic[i] = optimistic[i] && status[i] != Status::kUnknown;
    if (status[i] == Status::kUnknown) ++r.unknown_nodes;
  }
  Outcome best = Predict(g, optimistic, folded, model);
  r.gpu_nodes = best.gpu_nodes;
  r.partitions = static_cast<int>(best.delegated.size());
  r.all_partitions = best.all_partitions;
  r.partition_nodes = std::move(best.delegated);
  if (r.unknown_nodes > 0) {
    Outcome worst = Predict(g, pessimistic, folded, model);
    r.worst_gpu_nodes = worst.gpu_nodes;
    r.worst_partitions = static_cast<int>(worst.delegated.size());
  } else {
    r.worst_gpu_nodes = r.gpu_nodes;
    r.worst_partitions = r.partitions;
  }
  return r;
}

std::string PredictedLine(const SubgraphResidency& r) {
  std::string line = "predicted: " + std::to_string(r.gpu_nodes) + " of " + std::to_string(r.nodes) + " nodes on GPU, " +
                     std::to_string(r.partitions) + (r.partitions == 1 ? " partition" : " partitions");
  if (r.unknown_nodes > 0)
    line += " (" + std::to_string(r.unknown_nodes) + " node(s) of unknown status counted as delegated; if declined: " +
            std::to_string(r.worst_gpu_nodes) + " of " + std::to_string(r.nodes) + ", " +
            std::to_string(r.worst_partitions) + " partition(s))";
  return line;
}

std::string RuntimeLogLine(const SubgraphResidency& r, const ResidencyModel& model) {
  if (model.log_style == "tflite")
    return "Replacing " + std::to_string(r.gpu_nodes) + " out of " + std::to_string(r.nodes) +
           " node(s) with delegate (" + model.delegate_name + ") node, yielding " + std::to_string(r.all_partitions) +
           " partitions for the whole graph.";
  if (r.gpu_nodes == 0)
    return "No operations will run on the GPU, and all " + std::to_string(r.nodes) + " operations will run on the CPU.";
  return std::to_string(r.gpu_nodes) + " operations will run on the GPU, and the remaining " +
         std::to_string(r.nodes - r.gpu_nodes) + " operations will run on the CPU.";
}

}  // namespace gpuclean::lint
