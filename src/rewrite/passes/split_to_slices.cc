// split-to-slices: SPLIT / SPLIT_V -> one SLICE per output. The GPU delegates
// reject both split ops but take SLICE; each output is a contiguous block of
// the input along the split axis, so the slices copy the same values (exact).
#include <fmt/format.h>

#include "rewrite/passes/passes.h"
#include "rewrite/pattern_pass.h"

namespace gpuclean::rewrite::passes {
namespace {

struct SplitFound {
  int input;
  int axis;
};

class SplitToSlicesPass final : public PatternPass<SplitFound> {
 public:
  SplitToSlicesPass()
      : PatternPass({"split-to-slices", Exactness::kExact,
                     "SPLIT / SPLIT_V with a constant axis and static output shapes; each output becomes a SLICE of "
                     "the input"},
                    {tfl::BuiltinOperator_SPLIT, tfl::BuiltinOperator_SPLIT_V}) {}

 private:
  std::optional<SplitFound> Match(const OpSite& site) const override {
    const ir::Op& op = site.op;
    const bool split = op.code == tfl::BuiltinOperator_SPLIT;
    if (op.inputs.size() < (split ? 2u : 3u) || op.outputs.empty()) return std::nullopt;
    const int input = split ? op.inputs[1] : op.inputs[0];
    const std::vector<int64_t> axis_value = ConstInts(site.graph(), split ? op.inputs[0] : op.inputs[2]);
    if (axis_value.size() != 1 || input < 0) return std::nullopt;
    const std::vector<int32_t>& in_shape = site.tensor(input).shape;
    const int rank = static_cast<int>(in_shape.size());
    int axis = static_cast<int>(axis_value[0]);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return std::nullopt;
    // The output shapes are the authority on the pieces; they must tile the
    // input along the axis or the op is not what it claims to be.
    int64_t covered = 0;
    for (int out : op.outputs) {
      const std::vector<int32_t>& s = site.tensor(out).shape;
      if (static_cast<int>(s.size()) != rank) return std::nullopt;
      for (int d = 0; d < rank; ++d)
        if (d != axis && s[d] != in_shape[d]) return std::nullopt;
      covered += s[axis];
    }
    if (covered != in_shape[axis]) return std::nullopt;
    return SplitFound{input, axis};
  }

  std::string Rewrite(OpSite& site, const SplitFound& found) const override {
    std::vector<int> slices;
    int32_t offset = 0;
    for (int out : site.op.outputs) {
      const std::vector<int32_t> size = site.tensor(out).shape;
      std::vector<int32_t> begin(size.size(), 0);
      begin[found.axis] = offset;
      offset += size[found.axis];
      slices.push_back(site.b().Slice(found.input, begin, size));
    }
    site.edit.Replace(site.node, slices);
    return fmt::format("{} SLICEs along axis {}", site.op.outputs.size(), found.axis);
  }
};

}  // namespace

const Pass& SplitToSlices() {
  static const SplitToSlicesPass pass;
  return pass;
}

}  // namespace gpuclean::rewrite::passes
