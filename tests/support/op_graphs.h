#pragma once
// Every op-table row's graph (src/ir/ops.def, synth::OpGraph) written out as
// one probe request each, for the tests that run all rows on a real runtime
// in one batch.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "gpuclean/ir.h"
#include "gpuclean/probe.h"
#include "support/test_support.h"

namespace gpuclean::testing {

struct OpGraphBatch {
  std::vector<probe::ProbeRequest> requests;  // one per row with a graph, in table order
  std::vector<ir::Model> models;              // the graph of each request
  std::vector<std::string> names;             // its op's name
  std::string no_graph;                       // " OP OP ...": rows without a graph
};

// `graph_for` may supply a row's graph instead of synth::OpGraph (nullopt:
// use OpGraph's).
using RowGraph = std::function<std::optional<ir::Model>(tfl::BuiltinOperator)>;
OpGraphBatch OpGraphRequests(const TempDir& dir, probe::Runtime runtime, const RowGraph& graph_for = nullptr);

}  // namespace gpuclean::testing
