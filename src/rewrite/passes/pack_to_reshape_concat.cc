// pack-to-reshape-concat: PACK -> RESHAPE of each input to the output's rank
// (a 1 at the pack axis) + CONCATENATION on that axis. The GPU delegates
// reject PACK; stacking N tensors along a new axis is concatenating them
// along that axis once it exists, so the values are copied unchanged (exact).
#include <fmt/format.h>

#include "rewrite/graph_edit.h"
#include "rewrite/passes/passes.h"

namespace gpuclean::rewrite::passes {
namespace {

class PackToReshapeConcatPass final : public Pass {
 public:
  std::string_view id() const override { return "pack-to-reshape-concat"; }
  Exactness exactness() const override { return Exactness::kExact; }
  std::string_view contract() const override {
    return "PACK with a static output shape; each input is reshaped to carry a 1 at the axis, then concatenated";
  }

  PassResult Apply(ir::Model& model, const PassOptions&) const override {
    PassResult result;
    GraphEdit edit(model, std::string(id()));
    const size_t count = edit.graph().ops.size();
    for (size_t i = 0; i < count; ++i) {
      const ir::Op op = edit.graph().ops[i];
      if (op.code != tfl::BuiltinOperator_PACK || op.inputs.empty() || op.outputs.size() != 1) continue;
      const ir::Tensor& out = edit.graph().tensors[op.outputs[0]];
      if (out.is_dynamic()) continue;
      const int rank = out.rank();
      const auto* options = op.options.AsPackOptions();
      int axis = options ? options->axis : 0;
      if (axis < 0) axis += rank;
      if (axis < 0 || axis >= rank || out.shape[axis] != static_cast<int32_t>(op.inputs.size())) continue;
      std::vector<int32_t> piece = out.shape;
      piece[axis] = 1;
      bool inputs_ok = true;
      for (int in : op.inputs) {
        const std::vector<int32_t>& s = edit.graph().tensors[in].shape;
        std::vector<int32_t> expected = piece;
        expected.erase(expected.begin() + axis);
        if (s != expected) inputs_ok = false;
      }
      if (!inputs_ok) continue;

      std::vector<int> pieces;
      for (int in : op.inputs) pieces.push_back(edit.b().Reshape(in, piece));
      const int packed = pieces.size() == 1 ? pieces[0] : edit.b().Concatenation(pieces, axis);
      result.sites.push_back({static_cast<int>(i), "PACK",
                              fmt::format("{} RESHAPEs + CONCATENATION on axis {}", pieces.size(), axis)});
      edit.Replace(static_cast<int>(i), {packed});
    }
    edit.Commit();
    return result;
  }
};

}  // namespace

const Pass& PackToReshapeConcat() {
  static const PackToReshapeConcatPass pass;
  return pass;
}

}  // namespace gpuclean::rewrite::passes
