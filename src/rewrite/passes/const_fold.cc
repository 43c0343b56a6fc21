// const-fold: ops whose inputs are all constants -> the value stored. The
// delegate wants at least one runtime input per op (LiteRT#9192, "Expected 1
// const input tensor(s)"), so a constant computed in the graph (a TRANSPOSE
// of a weight, an ADD of two constants, a BROADCAST_TO of a constant) splits
// the partition. The value is computed once here by the interpreter running
// exactly those ops, so the pass is exact.
//
// Only the outermost constant-valued tensors are stored (those a runtime op
// or nothing else reads); the chain behind each one then drops as dead.
// Left alone: DENSIFY (densify-offline's job), DEQUANTIZE of stored weights
// (the delegate folds fp16/int8 weights itself and storing them float32
// would grow the file), values with quantisation parameters, graph outputs
// (a constant output is no graph), and anything over kMaxElements.
#include <fmt/format.h>

#include "gpuclean/error.h"
#include "rewrite/graph_edit.h"
#include "rewrite/passes/passes.h"

namespace gpuclean::rewrite::passes {
namespace {

constexpr int64_t kMaxElements = int64_t{16} << 20;

bool DependsOnDensify(const ir::Subgraph& g, int tensor) {
  const int p = g.Producer(tensor);
  if (p < 0) return false;
  if (g.ops[p].code == tfl::BuiltinOperator_DENSIFY) return true;
  for (int in : g.ops[p].inputs)
    if (in >= 0 && DependsOnDensify(g, in)) return true;
  return false;
}

bool IsWeightDequantize(const ir::Subgraph& g, const ir::Op& op) {
  return op.code == tfl::BuiltinOperator_DEQUANTIZE && !op.inputs.empty() && op.inputs[0] >= 0 &&
         g.tensors[op.inputs[0]].is_const();
}

bool Nondeterministic(tfl::BuiltinOperator code) {
  return code == tfl::BuiltinOperator_RANDOM_UNIFORM || code == tfl::BuiltinOperator_RANDOM_STANDARD_NORMAL ||
         code == tfl::BuiltinOperator_MULTINOMIAL;
}

class ConstFoldPass final : public Pass {
 public:
  std::string_view id() const override { return "const-fold"; }
  Exactness exactness() const override { return Exactness::kExact; }
  std::string_view contract() const override {
    return "ops computed from constants only (not DENSIFY, weight DEQUANTIZE, quantised or graph-output values); "
           "the interpreter's value is stored";
  }

  PassResult Apply(ir::Model& model, const PassOptions&) const override {
    PassResult result;
    GraphEdit edit(model, std::string(id()));
    const ir::Subgraph& g = edit.graph();
    const auto consumers = g.Consumers();
    const size_t count = g.ops.size();
    const std::vector<bool> constant_valued = ConstantValuedTensors(g);
    std::vector<bool> constant_op(count, false);
    for (size_t i = 0; i < count; ++i) {
      const ir::Op& op = g.ops[i];
      constant_op[i] =
          std::any_of(op.inputs.begin(), op.inputs.end(), [](int t) { return t >= 0; }) &&
          std::all_of(op.outputs.begin(), op.outputs.end(), [&](int t) { return t >= 0 && constant_valued[t]; });
    }
    for (size_t i = 0; i < count; ++i) {
      if (!constant_op[i]) continue;
      const ir::Op& op = edit.graph().ops[i];
      if (op.code == tfl::BuiltinOperator_DENSIFY || IsWeightDequantize(edit.graph(), op) || Nondeterministic(op.code))
        continue;
      bool read_at_runtime = false, foldable = true;
      for (int t : op.outputs) {
        const ir::Tensor& tensor = edit.graph().tensors[t];
        if (edit.graph().IsGraphOutput(t) || !tensor.quant.empty() || tensor.num_elements() > kMaxElements ||
            DependsOnDensify(edit.graph(), t))
          foldable = false;
        for (int c : consumers[t]) read_at_runtime = read_at_runtime || !constant_op[c];
      }
      if (!foldable || !read_at_runtime) continue;
      const std::string op_name(op.name());
      const std::vector<int32_t> outputs = op.outputs;
      std::vector<npy::Array> values;
      try {
        for (int t : outputs) values.push_back(EvaluateConstant(edit.graph(), t));
      } catch (const Error&) {
        continue;  // no kernel for some op in the chain: leave it to the runtime
      }
      std::vector<int> replacements;
      int64_t stored = 0;
      for (size_t k = 0; k < outputs.size(); ++k) {
        const ir::Tensor tensor = edit.graph().tensors[outputs[k]];
        stored += tensor.num_elements();
        replacements.push_back(edit.mutable_graph().AddConst(edit.prefix() + tensor.name, tensor.dtype, tensor.shape,
                                                             Bytes::Own(std::move(values[k].data))));
      }
      result.sites.push_back({static_cast<int>(i), op_name,
                              fmt::format("'{}' stored ({} values)", edit.graph().tensors[outputs[0]].name, stored)});
      edit.Replace(static_cast<int>(i), replacements);
    }
    edit.Commit();
    return result;
  }
};

}  // namespace

const Pass& ConstFold() {
  static const ConstFoldPass pass;
  return pass;
}

}  // namespace gpuclean::rewrite::passes
