// split-to-slices: SPLIT / SPLIT_V -> one SLICE per output. The GPU delegates
// reject both split ops but take SLICE; each output is a contiguous block of
// the input along the split axis, so the slices copy the same values (exact).
#include <fmt/format.h>

#include "rewrite/graph_edit.h"
#include "rewrite/passes/passes.h"

namespace gpuclean::rewrite::passes {
namespace {

class SplitToSlicesPass final : public Pass {
 public:
  std::string_view id() const override { return "split-to-slices"; }
  Exactness exactness() const override { return Exactness::kExact; }
  std::string_view contract() const override {
    return "SPLIT / SPLIT_V with a constant axis and static output shapes; each output becomes a SLICE of the input";
  }

  PassResult Apply(ir::Model& model, const PassOptions&) const override {
    PassResult result;
    GraphEdit edit(model, std::string(id()));
    const size_t count = edit.graph().ops.size();
    for (size_t i = 0; i < count; ++i) {
      const ir::Op op = edit.graph().ops[i];
      const bool split = op.code == tfl::BuiltinOperator_SPLIT;
      if (!split && op.code != tfl::BuiltinOperator_SPLIT_V) continue;
      if (op.inputs.size() < (split ? 2u : 3u) || op.outputs.empty()) continue;
      const int input = split ? op.inputs[1] : op.inputs[0];
      const std::vector<int64_t> axis_value = ConstInts(edit.graph(), split ? op.inputs[0] : op.inputs[2]);
      if (axis_value.size() != 1 || input < 0) continue;
      const std::vector<int32_t> in_shape = edit.graph().tensors[input].shape;
      const int rank = static_cast<int>(in_shape.size());
      int axis = static_cast<int>(axis_value[0]);
      if (axis < 0) axis += rank;
      if (axis < 0 || axis >= rank) continue;
      // The output shapes are the authority on the pieces; they must tile the
      // input along the axis or the op is not what it claims to be.
      int64_t covered = 0;
      bool shapes_ok = true;
      for (int out : op.outputs) {
        const std::vector<int32_t>& s = edit.graph().tensors[out].shape;
        if (static_cast<int>(s.size()) != rank) { shapes_ok = false; break; }
        for (int d = 0; d < rank; ++d)
          if (d != axis && s[d] != in_shape[d]) shapes_ok = false;
        covered += s[axis];
      }
      if (!shapes_ok || covered != in_shape[axis]) continue;

      std::vector<int> slices;
      int32_t offset = 0;
      for (int out : op.outputs) {
        const std::vector<int32_t> size = edit.graph().tensors[out].shape;
        std::vector<int32_t> begin(rank, 0);
        begin[axis] = offset;
        offset += size[axis];
        slices.push_back(edit.b().Slice(input, begin, size));
      }
      result.sites.push_back({static_cast<int>(i), op.name(),
                              fmt::format("{} SLICEs along axis {}", op.outputs.size(), axis)});
      edit.Replace(static_cast<int>(i), slices);
    }
    edit.Commit();
    return result;
  }
};

}  // namespace

const Pass& SplitToSlices() {
  static const SplitToSlicesPass pass;
  return pass;
}

}  // namespace gpuclean::rewrite::passes
