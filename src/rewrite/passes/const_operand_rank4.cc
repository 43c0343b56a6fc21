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

#include "rewrite/passes/passes.h"
#include "rewrite/pattern_pass.h"

namespace gpuclean::rewrite::passes {
namespace {

std::vector<int32_t> PrefixedToRank4(const std::vector<int32_t>& shape) {
  std::vector<int32_t> out(4 - shape.size(), 1);
  out.insert(out.end(), shape.begin(), shape.end());
  return out;
}

class ConstOperandRank4Pass final : public OpPass {
 public:
  ConstOperandRank4Pass()
      : OpPass({"const-operand-rank4", Exactness::kExact,
                "ADD/SUB/MUL/DIV/MAXIMUM/MINIMUM/SQUARED_DIFFERENCE/POW with a constant operand of rank 2 or 3 whose "
                "first dimension is > 1 and a runtime operand of rank <= 3: both reshaped to rank 4 by leading 1s "
                "(the constant re-stored), the result reshaped back (bit-identical)"},
               IsBinaryElementwise) {}

 private:
  std::optional<std::string> Visit(OpSite& site) const override {
    const ir::Op& op = site.op;
    if (op.inputs.size() != 2 || op.outputs.size() != 1) return std::nullopt;
    const ir::Subgraph& g = site.graph();
    const bool batched_const = std::any_of(op.inputs.begin(), op.inputs.end(), [&](int t) {
      return t >= 0 && IsConstantValued(g, t) && (g.tensors[t].rank() == 2 || g.tensors[t].rank() == 3) &&
             g.tensors[t].shape[0] > 1;
    });
    if (!batched_const) return std::nullopt;
    const ir::Tensor out = g.tensors[op.outputs[0]];
    if (out.rank() > 3 || out.is_dynamic()) {
      site.Skip({out.name}, "the output has rank 4 already");
      return std::nullopt;
    }
    std::vector<int> inputs;
    std::string moved;
    for (int t : op.inputs) {
      const ir::Tensor operand = site.tensor(t);
      const std::vector<int32_t> shape = PrefixedToRank4(operand.shape);
      if (IsConstantValued(site.graph(), t)) {
        const npy::Array value = EvaluateConstant(site.graph(), t);
        inputs.push_back(site.b().Const(fmt::format("{}{}_rank4_{}", site.edit.prefix(), operand.name, site.node),
                                        value.dtype, shape, Bytes::Own(value.data)));
        moved += fmt::format("{}constant '{}' [{}] -> [{}]", moved.empty() ? "" : ", ", operand.name,
                             fmt::join(operand.shape, ","), fmt::join(shape, ","));
      } else {
        inputs.push_back(site.b().Reshape(t, shape));
      }
    }
    const int y4 = site.b().Op(op.code, inputs, op.options).at(0);
    site.edit.Replace(site.node, {site.b().Reshape(y4, out.shape)});
    return moved + "; computed at rank 4";
  }
};

}  // namespace

const Pass& ConstOperandRank4() {
  static const ConstOperandRank4Pass pass;
  return pass;
}

}  // namespace gpuclean::rewrite::passes
