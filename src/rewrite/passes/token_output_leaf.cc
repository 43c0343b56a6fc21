// token-output-leaf: a rank-3 [1,N,C] tensor that is a graph output and also
// read by other ops has its later branch clobbered on the GPU: the runtime
// shares the output buffer with the consumers' input. The producer now
// writes a new internal tensor that the consumers read, and the graph output
// (same tensor, name and slot) becomes MUL(internal, one) with `one` a
// runtime input fed 1.0: a separate op writing a buffer nobody else reads.
// Not a RESHAPE or a MUL by a constant 1: the delegate may drop those as
// no-ops and alias the buffers again, which is why the ADD output alias fix
// (LiteRT#8599) uses a runtime one as well. x * 1 == x, so exact.
#include <fmt/format.h>

#include "rewrite/graph_edit.h"
#include "rewrite/passes/passes.h"

namespace gpuclean::rewrite::passes {
namespace {

class TokenOutputLeafPass final : public Pass {
 public:
  std::string_view id() const override { return "token-output-leaf"; }
  Exactness exactness() const override { return Exactness::kExact; }
  std::string_view contract() const override {
    return "float32 rank-3 graph output produced by an op and read by other ops; adds one graph input 'one' [1] "
           "fed 1.0";
  }

  PassResult Apply(ir::Model& model, const PassOptions&) const override {
    PassResult result;
    GraphEdit edit(model, std::string(id()));
    int one = -1;
    const std::vector<int32_t> outputs = edit.graph().outputs;
    for (int t : outputs) {
      const ir::Subgraph& g = edit.graph();
      if (t < 0 || g.tensors[t].rank() != 3 || g.tensors[t].dtype != tfl::TensorType_FLOAT32) continue;
      const int producer = g.Producer(t);
      if (producer < 0) continue;
      std::vector<int> readers;
      for (size_t j = 0; j < g.ops.size(); ++j)
        for (int in : g.ops[j].inputs)
          if (in == t) {
            readers.push_back(static_cast<int>(j));
            break;
          }
      if (readers.empty()) continue;

      if (one < 0) {
        auto [input, host] = edit.ScalarHostInput("one", 1.0f);
        one = input;
        result.host_inputs.push_back(std::move(host));
      }
      ir::Tensor shared = edit.graph().tensors[t];
      const std::string name = shared.name;
      shared.name = edit.prefix() + name;
      shared.shape_signature.clear();
      ir::Subgraph& mg = edit.mutable_graph();
      const int internal = mg.AddTensor(std::move(shared));
      for (int32_t& out : mg.ops[producer].outputs)
        if (out == t) out = internal;
      for (int reader : readers)
        for (int32_t& in : mg.ops[reader].inputs)
          if (in == t) in = internal;
      // The MUL takes over the original tensor, so the output keeps its name,
      // slot and signature entry; the builder's own output tensor goes unused.
      edit.b().Mul(internal, one);
      edit.mutable_graph().ops.back().outputs[0] = t;
      result.sites.push_back({producer, edit.graph().ops[producer].name(),
                              fmt::format("output '{}' {} = tokens * one; {} consumer(s) read the tokens", name,
                                          ir::FormatShape(edit.graph().tensors[t].shape), readers.size())});
    }
    edit.Commit();
    return result;
  }
};

}  // namespace

const Pass& TokenOutputLeaf() {
  static const TokenOutputLeafPass pass;
  return pass;
}

}  // namespace gpuclean::rewrite::passes
