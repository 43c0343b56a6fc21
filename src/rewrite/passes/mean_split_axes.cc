// mean-split-axes: MEAN / SUM over several axes -> one single-axis reduction
// per axis, innermost first, then a RESHAPE when keep_dims is false. One
// reduction over ~65k elements comes back NaN on ML Drift (fp32 too) and
// loses the mean in a half accumulator; single-axis steps keep each
// accumulation short. A single axis longer than 16384 (a GroupNorm(1) over
// [1,1,C*H*W], as exporters write it) is first viewed as two axes, a x b,
// and reduced over each. A mean of equal-sized means is the mean, a sum of
// sums the sum: exact in real arithmetic, float rounding only reorders.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "rewrite/passes/passes.h"
#include "rewrite/pattern_pass.h"

namespace gpuclean::rewrite::passes {
namespace {

// Reductions at most this large are left as they are: the delegates compute
// them right (a quarter of lint's reduce-extent limit), and every rewrite
// reorders float sums, which deep graphs can amplify past the exact bound
// (the squeeze-excite means of selfie_segmentation, extents 144-2304, moved
// its output by 1.1e-5 when split).
constexpr int64_t kMinExtent = 4096;
// One axis is split in two past lint's reduce-extent limit (the 173056-
// element GroupNorm mean of RF-DETR's projector loses its variance in a
// half accumulator), when it factors into two parts of at least 16.
constexpr int64_t kMinSingleAxisExtent = 16384;
constexpr int64_t kMinFactor = 16;

// The largest divisor of n not above sqrt(n); 1 for a prime.
int64_t InnerFactor(int64_t n) {
  int64_t best = 1;
  for (int64_t d = 2; d * d <= n; ++d)
    if (n % d == 0) best = d;
  return best;
}

class MeanSplitAxesPass final : public OpPass {
 public:
  MeanSplitAxesPass()
      : OpPass({"mean-split-axes", Exactness::kExact,
                "float MEAN / SUM with constant axes naming two or more distinct dimensions over more than 4096 "
                "elements, or one axis of more than 16384 (viewed as two); reduced one axis at a time (exact in "
                "real arithmetic, float summation order changes)"},
               {tfl::BuiltinOperator_MEAN, tfl::BuiltinOperator_SUM}) {}

 private:
  std::optional<std::string> Visit(OpSite& site) const override {
    const ir::Op& op = site.op;
    if (op.inputs.size() != 2 || op.outputs.size() != 1) return std::nullopt;
    const int x = op.inputs[0];
    const ir::Tensor& in = site.tensor(x);
    if (in.dtype != tfl::TensorType_FLOAT32 || in.is_dynamic()) return std::nullopt;
    const std::vector<int64_t> raw = ConstInts(site.graph(), op.inputs[1]);
    const int rank = in.rank();
    std::vector<int32_t> axes;
    if (raw.empty()) return std::nullopt;
    for (int64_t a : raw) {
      const int64_t n = a < 0 ? a + rank : a;
      if (n < 0 || n >= rank) return std::nullopt;
      axes.push_back(static_cast<int32_t>(n));
    }
    std::sort(axes.begin(), axes.end(), std::greater<>());
    axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
    const auto* reducer = op.options.AsReducerOptions();
    const bool keep_dims = reducer && reducer->keep_dims;
    if (axes.size() == 1) {
      const int32_t axis = axes[0];
      const int64_t n = in.shape[axis];
      const int64_t b = InnerFactor(n);
      if (n <= kMinSingleAxisExtent || rank > 3 || b < kMinFactor) return std::nullopt;
      builder::Shape viewed(in.shape.begin(), in.shape.end());
      viewed[axis] = static_cast<int32_t>(n / b);
      viewed.insert(viewed.begin() + axis + 1, static_cast<int32_t>(b));
      int value = site.b().Reshape(x, viewed);
      value = site.b().Reduce(op.code, value, {axis + 1}, true);
      value = site.b().Reduce(op.code, value, {axis}, true);
      value = site.b().Reshape(value, site.tensor(op.outputs[0]).shape);
      site.edit.Replace(site.node, {value});
      return fmt::format("one {} over {} elements as {} x {} (axis {})", op.name(), n, n / b, b, axis);
    }
    int64_t extent = 1;
    for (int32_t axis : axes) extent *= in.shape[axis];
    if (extent <= kMinExtent) return std::nullopt;

    int value = x;
    for (int32_t axis : axes) value = site.b().Reduce(op.code, value, {axis}, true);
    if (!keep_dims) value = site.b().Reshape(value, site.tensor(op.outputs[0]).shape);
    site.edit.Replace(site.node, {value});
    return fmt::format("{} single-axis {}s (axes {})", axes.size(), op.name(), fmt::join(axes, ", "));
  }
};

}  // namespace

const Pass& MeanSplitAxes() {
  static const MeanSplitAxesPass pass;
  return pass;
}

}  // namespace gpuclean::rewrite::passes
