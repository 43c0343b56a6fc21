// const-operand-rank4: a binary elementwise op with a 2-D or 3-D constant
// operand whose first dimension is > 1 -> the same op at rank 4 with every
// operand's shape prefixed by 1s, the result reshaped back. LiteRT.js
// 2.5.3's WebGPU backend delegates such ops but misreads the constant
// (measured: data/compat/mldrift-webgpu@2.5.3.json,
// elementwise-const-batched); rank-4 constants with a leading 1 are read
// right. Prefixing 1s keeps every element and every broadcast, and the
// arithmetic is unchanged: bit-identical.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "rewrite/graph_edit.h"
#include "rewrite/passes/passes.h"

namespace gpuclean::rewrite::passes {
namespace {

std::vector<int32_t> PrefixedToRank4(const std::vector<int32_t>& shape) {
  std::vector<int32_t> out(4 - shape.size(), 1);
  out.insert(out.end(), shape.begin(), shape.end());
  return out;
}

class ConstOperandRank4Pass final : public Pass {
 public:
  std::string_view id() const override { return "const-operand-rank4"; }
  Exactness exactness() const override { return Exactness::kExact; }
  std::string_view contract() const override {
    return "ADD/SUB/MUL/DIV/MAXIMUM/MINIMUM/SQUARED_DIFFERENCE/POW with a constant operand of rank 2 or 3 whose "
           "first dimension is > 1 and a runtime operand of rank <= 3: both reshaped to rank 4 by leading 1s (the "
           "constant re-stored), the result reshaped back (bit-identical)";
  }

  PassResult Apply(ir::Model& model, const PassOptions&) const override {
    PassResult result;
    GraphEdit edit(model, std::string(id()));
    const size_t count = edit.graph().ops.size();
    for (size_t i = 0; i < count; ++i) {
      const ir::Op op = edit.graph().ops[i];
      if (!IsBinaryElementwise(op.code) || op.inputs.size() != 2 || op.outputs.size() != 1) continue;
      const ir::Subgraph& g = edit.graph();
      bool batched_const = false;
      for (int t : op.inputs)
        batched_const = batched_const || (t >= 0 && IsConstantValued(g, t) &&
                                          (g.tensors[t].rank() == 2 || g.tensors[t].rank() == 3) && g.tensors[t].shape[0] > 1);
      if (!batched_const) continue;
      const ir::Tensor out = g.tensors[op.outputs[0]];
      if (out.rank() > 3 || out.is_dynamic()) {
        result.skipped.push_back({static_cast<int>(i), std::string(op.name()), {out.name}, "the output has rank 4 already"});
        continue;
      }
      std::vector<int> inputs;
      std::string moved;
      for (int t : op.inputs) {
        const ir::Tensor operand = edit.graph().tensors[t];
        const std::vector<int32_t> shape = PrefixedToRank4(operand.shape);
        if (IsConstantValued(edit.graph(), t)) {
          const npy::Array value = EvaluateConstant(edit.graph(), t);
          inputs.push_back(edit.b().Const(fmt::format("{}{}_rank4_{}", edit.prefix(), operand.name, i), value.dtype, shape,
                                          Bytes::Own(value.data)));
          moved += fmt::format("{}constant '{}' [{}] -> [{}]", moved.empty() ? "" : ", ", operand.name,
                               fmt::join(operand.shape, ","), fmt::join(shape, ","));
        } else {
          inputs.push_back(edit.b().Reshape(t, shape));
        }
      }
      const int y4 = edit.b().Op(op.code, inputs, op.options).at(0);
      edit.Replace(static_cast<int>(i), {edit.b().Reshape(y4, out.shape)});
      result.sites.push_back({static_cast<int>(i), std::string(op.name()), moved + "; computed at rank 4"});
    }
    edit.Commit();
    return result;
  }
};

}  // namespace

const Pass& ConstOperandRank4() {
  static const ConstOperandRank4Pass pass;
  return pass;
}

}  // namespace gpuclean::rewrite::passes
