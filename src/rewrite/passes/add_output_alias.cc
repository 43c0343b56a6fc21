// add-output-alias: an ADD of two runtime tensors whose result is a graph
// output and also consumed returns an operand on the GPU (LiteRT#8599). The
// ADD stays for its consumers; the graph output becomes MUL(sum, one) with
// `one` a runtime input the host feeds 1.0. A constant one would be folded
// or fused away by the delegate and the alias would come back, hence the
// input. x * 1 == x exactly, so the pass is exact.
#include <fmt/format.h>

#include "rewrite/passes/passes.h"
#include "rewrite/pattern_pass.h"

namespace gpuclean::rewrite::passes {
namespace {

// The ADD's consumers besides the graph output.
using Readers = std::vector<int>;

class AddOutputAliasPass final : public PatternPass<Readers> {
 public:
  AddOutputAliasPass()
      : PatternPass({"add-output-alias", Exactness::kExact,
                     "float32 ADD of two runtime tensors whose output is a graph output and read by other ops; adds "
                     "one graph input 'one' [1] fed 1.0"},
                    {tfl::BuiltinOperator_ADD}) {}

 private:
  std::optional<Readers> Match(const OpSite& site) const override {
    const ir::Subgraph& g = site.graph();
    const ir::Op& add = site.op;
    if (add.inputs.size() != 2 || add.outputs.size() != 1) return std::nullopt;
    const int out = add.outputs[0];
    const ir::Tensor& t = g.tensors[out];
    if (t.dtype != tfl::TensorType_FLOAT32 || t.rank() == 0 || !g.IsGraphOutput(out)) return std::nullopt;
    if (IsConstantValued(g, add.inputs[0]) || IsConstantValued(g, add.inputs[1])) return std::nullopt;
    Readers readers;
    for (size_t j = 0; j < g.ops.size(); ++j)
      for (int in : g.ops[j].inputs)
        if (in == out) {
          readers.push_back(static_cast<int>(j));
          break;
        }
    if (readers.empty()) return std::nullopt;
    return readers;
  }

  std::string Rewrite(OpSite& site, const Readers& readers) const override {
    const ir::Op& add = site.op;
    const int out = add.outputs[0];
    const int a = add.inputs[0], b = add.inputs[1];
    const auto* options = add.options.AsAddOptions();
    const auto act = options ? options->fused_activation_function : tfl::ActivationFunctionType_NONE;
    const std::string name = site.tensor(out).name;
    const int one = site.SharedHostScalar("one", 1.0f);
    const int sum = site.b().Add(a, b, act);
    const int leaf = site.b().Mul(sum, one);
    // The consumers read the new ADD; the old tensor (its name, output slot
    // and signature entry) goes to the MUL through Replace.
    for (int reader : readers)
      for (int32_t& in : site.edit.mutable_graph().ops[reader].inputs)
        if (in == out) in = sum;
    site.edit.Replace(site.node, {leaf});
    return fmt::format("output '{}' = sum * one; {} consumer(s) read the sum", name, readers.size());
  }
};

}  // namespace

const Pass& AddOutputAlias() {
  static const AddOutputAliasPass pass;
  return pass;
}

}  // namespace gpuclean::rewrite::passes
