// add-output-alias: an ADD of two runtime tensors whose result is a graph
// output and also consumed returns an operand on the GPU (LiteRT#8599). The
// ADD stays for its consumers; the graph output becomes MUL(sum, one) with
// `one` a runtime input the host feeds 1.0. A constant one would be folded
// or fused away by the delegate and the alias would come back, hence the
// input. x * 1 == x exactly, so the pass is exact.
#include <fmt/format.h>

#include "rewrite/graph_edit.h"
#include "rewrite/passes/passes.h"

namespace gpuclean::rewrite::passes {
namespace {

class AddOutputAliasPass final : public Pass {
 public:
  std::string_view id() const override { return "add-output-alias"; }
  Exactness exactness() const override { return Exactness::kExact; }
  std::string_view contract() const override {
    return "float32 ADD of two runtime tensors whose output is a graph output and read by other ops; adds one "
           "graph input 'one' [1] fed 1.0";
  }

  PassResult Apply(ir::Model& model, const PassOptions&) const override {
    PassResult result;
    GraphEdit edit(model, std::string(id()));
    const size_t count = edit.graph().ops.size();
    int one = -1;
    for (size_t i = 0; i < count; ++i) {
      const ir::Subgraph& g = edit.graph();
      const ir::Op& add = g.ops[i];
      if (add.code != tfl::BuiltinOperator_ADD || add.inputs.size() != 2 || add.outputs.size() != 1) continue;
      const int out = add.outputs[0];
      const ir::Tensor& t = g.tensors[out];
      if (t.dtype != tfl::TensorType_FLOAT32 || t.rank() == 0 || !g.IsGraphOutput(out)) continue;
      if (IsConstantValued(g, add.inputs[0]) || IsConstantValued(g, add.inputs[1])) continue;
      std::vector<int> readers;
      for (size_t j = 0; j < g.ops.size(); ++j)
        for (int in : g.ops[j].inputs)
          if (in == out) {
            readers.push_back(static_cast<int>(j));
            break;
          }
      if (readers.empty()) continue;

      const int a = add.inputs[0], b = add.inputs[1];
      const auto* options = add.options.AsAddOptions();
      const auto act = options ? options->fused_activation_function : tfl::ActivationFunctionType_NONE;
      const std::string name = t.name;
      if (one < 0) {
        auto [input, host] = edit.ScalarHostInput("one", 1.0f);
        one = input;
        result.host_inputs.push_back(std::move(host));
      }
      const int sum = edit.b().Add(a, b, act);
      const int leaf = edit.b().Mul(sum, one);
      // The consumers read the new ADD; the old tensor (its name, output slot
      // and signature entry) goes to the MUL through Replace.
      for (int reader : readers)
        for (int32_t& in : edit.mutable_graph().ops[reader].inputs)
          if (in == out) in = sum;
      result.sites.push_back({static_cast<int>(i), "ADD",
                              fmt::format("output '{}' = sum * one; {} consumer(s) read the sum", name,
                                          readers.size())});
      edit.Replace(static_cast<int>(i), {leaf});
    }
    edit.Commit();
    return result;
  }
};

}  // namespace

const Pass& AddOutputAlias() {
  static const AddOutputAliasPass pass;
  return pass;
}

}  // namespace gpuclean::rewrite::passes
