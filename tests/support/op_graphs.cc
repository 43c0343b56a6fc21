#include "support/op_graphs.h"

#include "gpuclean/format.h"
#include "gpuclean/op_table.h"
#include "gpuclean/synth.h"

namespace gpuclean::testing {

OpGraphBatch OpGraphRequests(const TempDir& dir, probe::Runtime runtime, const RowGraph& graph_for) {
  OpGraphBatch batch;
  for (tfl::BuiltinOperator code : ir::TableOps()) {
    const std::string name = ir::BuiltinName(code);
    std::optional<ir::Model> model = graph_for ? graph_for(code) : std::nullopt;
    if (!model) model = synth::OpGraph(code);
    if (!model) {
      batch.no_graph += " " + name;
      continue;
    }
    probe::ProbeRequest r;
    r.model_path = dir.file(name + ".tflite");
    format::WriteModel(*model, r.model_path);
    r.runtime = runtime;
    r.out_dir = dir.file(name);
    batch.requests.push_back(r);
    batch.models.push_back(std::move(*model));
    batch.names.push_back(name);
  }
  return batch;
}

}  // namespace gpuclean::testing
