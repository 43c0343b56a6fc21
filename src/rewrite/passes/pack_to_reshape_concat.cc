// pack-to-reshape-concat: PACK -> RESHAPE of each input to the output's rank
// (a 1 at the pack axis) + CONCATENATION on that axis. The GPU delegates
// reject PACK; stacking N tensors along a new axis is concatenating them
// along that axis once it exists, so the values are copied unchanged (exact).
#include <fmt/format.h>

#include "rewrite/passes/passes.h"
#include "rewrite/pattern_pass.h"

namespace gpuclean::rewrite::passes {
namespace {

class PackToReshapeConcatPass final : public OpPass {
 public:
  PackToReshapeConcatPass()
      : OpPass({"pack-to-reshape-concat", Exactness::kExact,
                "PACK with a static output shape; each input is reshaped to carry a 1 at the axis, then concatenated"},
               {tfl::BuiltinOperator_PACK}) {}

 private:
  std::optional<std::string> Visit(OpSite& site) const override {
    const ir::Op& op = site.op;
    if (op.inputs.empty() || op.outputs.size() != 1) return std::nullopt;
    const ir::Tensor& out = site.tensor(op.outputs[0]);
    if (out.is_dynamic()) return std::nullopt;
    const int rank = out.rank();
    const auto* options = op.options.AsPackOptions();
    int axis = options ? options->axis : 0;
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank || out.shape[axis] != static_cast<int32_t>(op.inputs.size())) return std::nullopt;
    std::vector<int32_t> piece = out.shape;
    piece[axis] = 1;
    std::vector<int32_t> expected = piece;
    expected.erase(expected.begin() + axis);
    for (int in : op.inputs)
      if (site.tensor(in).shape != expected) return std::nullopt;

    std::vector<int> pieces;
    for (int in : op.inputs) pieces.push_back(site.b().Reshape(in, piece));
    const int packed = pieces.size() == 1 ? pieces[0] : site.b().Concatenation(pieces, axis);
    site.edit.Replace(site.node, {packed});
    return fmt::format("{} RESHAPEs + CONCATENATION on axis {}", pieces.size(), axis);
  }
};

}  // namespace

const Pass& PackToReshapeConcat() {
  static const PackToReshapeConcatPass pass;
  return pass;
}

}  // namespace gpuclean::rewrite::passes
