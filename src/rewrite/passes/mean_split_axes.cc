// mean-split-axes: MEAN / SUM over several axes -> one single-axis reduction
// per axis, innermost first, then a RESHAPE when keep_dims is false. One
// reduction over ~65k elements comes back NaN on ML Drift (fp32 too) and
// loses the mean in a half accumulator; single-axis steps keep each
// accumulation short. A mean of equal-sized means is the mean, a sum of sums
// the sum: exact in real arithmetic, float rounding only reorders.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "rewrite/graph_edit.h"
#include "rewrite/passes/passes.h"

namespace gpuclean::rewrite::passes {
namespace {

// Reductions at most this large are left as they are: the delegates compute
// them right (a quarter of lint's reduce-extent limit), and every rewrite
// reorders float sums, which deep graphs can amplify past the exact bound
// (the squeeze-excite means of selfie_segmentation, extents 144-2304, moved
// its output by 1.1e-5 when split).
constexpr int64_t kMinExtent = 4096;

class MeanSplitAxesPass final : public Pass {
 public:
  std::string_view id() const override { return "mean-split-axes"; }
  Exactness exactness() const override { return Exactness::kExact; }
  std::string_view contract() const override {
    return "float MEAN / SUM with constant axes naming two or more distinct dimensions over more than 4096 "
           "elements; reduced one axis at a time (exact in real arithmetic, float summation order changes)";
  }

  PassResult Apply(ir::Model& model, const PassOptions&) const override {
    PassResult result;
    GraphEdit edit(model, std::string(id()));
    const size_t count = edit.graph().ops.size();
    for (size_t i = 0; i < count; ++i) {
      const ir::Op op = edit.graph().ops[i];
      if (op.code != tfl::BuiltinOperator_MEAN && op.code != tfl::BuiltinOperator_SUM) continue;
      if (op.inputs.size() != 2 || op.outputs.size() != 1) continue;
      const int x = op.inputs[0];
      const ir::Tensor& in = edit.graph().tensors[x];
      if (in.dtype != tfl::TensorType_FLOAT32 || in.is_dynamic()) continue;
      const std::vector<int64_t> raw = ConstInts(edit.graph(), op.inputs[1]);
      const int rank = in.rank();
      std::vector<int32_t> axes;
      bool axes_ok = !raw.empty();
      for (int64_t a : raw) {
        const int64_t n = a < 0 ? a + rank : a;
        if (n < 0 || n >= rank) axes_ok = false;
        else axes.push_back(static_cast<int32_t>(n));
      }
      std::sort(axes.begin(), axes.end(), std::greater<>());
      axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
      if (!axes_ok || axes.size() < 2) continue;
      int64_t extent = 1;
      for (int32_t axis : axes) extent *= in.shape[axis];
      if (extent <= kMinExtent) continue;
      const auto* reducer = op.options.AsReducerOptions();
      const bool keep_dims = reducer && reducer->keep_dims;

      int value = x;
      for (int32_t axis : axes) value = edit.b().Reduce(op.code, value, {axis}, true);
      if (!keep_dims) value = edit.b().Reshape(value, edit.graph().tensors[op.outputs[0]].shape);
      result.sites.push_back({static_cast<int>(i), op.name(),
                              fmt::format("{} single-axis {}s (axes {})", axes.size(), op.name(),
                                          fmt::join(axes, ", "))});
      edit.Replace(static_cast<int>(i), {value});
    }
    edit.Commit();
    return result;
  }
};

}  // namespace

const Pass& MeanSplitAxes() {
  static const MeanSplitAxesPass pass;
  return pass;
}

}  // namespace gpuclean::rewrite::passes
