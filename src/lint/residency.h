#pragma once
#include <vector>

#include "gpuclean/lint.h"

namespace gpuclean::lint {

// Node subsets in the order the runtime's partitioner forms them; `kinds`
// receives whether each subset is of supported nodes.
std::vector<std::vector<int>> PartitionNodes(const ir::Subgraph& g, const std::vector<bool>& supported,
                                             std::vector<bool>* kinds);

SubgraphResidency PredictResidency(int subgraph, const ir::Subgraph& g, const std::vector<Status>& status,
                                   const std::vector<bool>& folded, const ResidencyModel& model);

}  // namespace gpuclean::lint
