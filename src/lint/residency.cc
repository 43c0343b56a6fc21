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
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const auto& a, const auto& b) { return a.size() > b.size(); });
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
  std::vector<bool> proven(n), if_accepted(n);
  for (int i = 0; i < n; ++i) {
    if_accepted[i] = RunsOnAccelerator(status[i]);
    proven[i] = if_accepted[i] && status[i] != Status::kUnknown;
    if (status[i] == Status::kUnknown) ++r.unknown_nodes;
  }
  Outcome headline = Predict(g, proven, folded, model);
  r.gpu_nodes = headline.gpu_nodes;
  r.partitions = static_cast<int>(headline.delegated.size());
  r.all_partitions = headline.all_partitions;
  r.partition_nodes = std::move(headline.delegated);
  if (r.unknown_nodes > 0) {
    Outcome accepted = Predict(g, if_accepted, folded, model);
    r.if_accepted_gpu_nodes = accepted.gpu_nodes;
    r.if_accepted_partitions = static_cast<int>(accepted.delegated.size());
  } else {
    r.if_accepted_gpu_nodes = r.gpu_nodes;
    r.if_accepted_partitions = r.partitions;
  }
  return r;
}

std::string PredictedLine(const SubgraphResidency& r) {
  std::string line = "predicted: " + std::to_string(r.gpu_nodes) + " of " + std::to_string(r.nodes) +
                     " nodes on GPU, " + std::to_string(r.partitions) +
                     (r.partitions == 1 ? " partition" : " partitions");
  if (r.unknown_nodes > 0)
    line += " (" + std::to_string(r.unknown_nodes) +
            " node(s) with no matrix entry counted off the GPU; if the delegate accepts them: " +
            std::to_string(r.if_accepted_gpu_nodes) + " of " + std::to_string(r.nodes) + ", " +
            std::to_string(r.if_accepted_partitions) + (r.if_accepted_partitions == 1 ? " partition)" : " partitions)");
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
