// rmsnorm-scale-first: RMSNorm / ScaleNorm as converters emit it,
//   y = x * RSQRT(MEAN(x*x, A) + eps)      (or x / SQRT(...))
// squares x before reducing: x*x passes half's 65504 at |x| > 256 and the
// head outputs come out exactly zero (FACTS.md §2). Rewritten to scale x by
// 1/S first, S the per-row power of two at or above max(1, amax|x| / 8):
//   x / sqrt(mean(x^2) + eps) == xs / sqrt(mean(xs^2) + eps / S^2)
// A power of two makes the scaled computation the original's scaled
// exactly, so fp32 outputs are bit-identical.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "rewrite/passes/passes.h"
#include "rewrite/passes/row_scale.h"
#include "rewrite/pattern_pass.h"

namespace gpuclean::rewrite::passes {
namespace {

bool IsSquareOf(const ir::Subgraph& g, int sq, int x) {
  if (const ir::Op* op = ProducerWithoutActivation(g, sq, tfl::BuiltinOperator_MUL))
    return op->inputs[0] == x && op->inputs[1] == x;
  if (const ir::Op* op = ProducerWithoutActivation(g, sq, tfl::BuiltinOperator_SQUARE)) return op->inputs[0] == x;
  if (const ir::Op* op = ProducerWithoutActivation(g, sq, tfl::BuiltinOperator_POW))
    return op->inputs[0] == x && ConstScalar(g, op->inputs[1]) == 2.0f;
  return false;
}

struct RmsMatch {
  int x;
  std::vector<int32_t> axes;
  float eps;
  bool sqrt_div;  // x / SQRT(...): kept, so the rounding is the original's
};

// y = x * RSQRT(MEAN(x^2, A) + eps) or x / SQRT(MEAN(x^2, A) + eps).
std::optional<RmsMatch> MatchRms(const ir::Subgraph& g, const ir::Op& y) {
  if (y.inputs.size() != 2 || !HasNoFusedActivation(y)) return std::nullopt;
  std::vector<std::pair<int, int>> candidates;  // {x, ve}
  if (y.code == tfl::BuiltinOperator_MUL) {
    for (int side = 0; side < 2; ++side)
      if (const ir::Op* r = ProducerWithoutActivation(g, y.inputs[side], tfl::BuiltinOperator_RSQRT))
        candidates.emplace_back(y.inputs[1 - side], r->inputs[0]);
  } else if (y.code == tfl::BuiltinOperator_DIV) {
    if (const ir::Op* s = ProducerWithoutActivation(g, y.inputs[1], tfl::BuiltinOperator_SQRT))
      candidates.emplace_back(y.inputs[0], s->inputs[0]);
  }
  for (const auto& [x, ve] : candidates) {
    const ir::Op* add = ProducerWithoutActivation(g, ve, tfl::BuiltinOperator_ADD);
    if (!add || add->inputs.size() != 2 || g.tensors[x].dtype != tfl::TensorType_FLOAT32) continue;
    for (int side = 0; side < 2; ++side) {
      const std::optional<float> eps = ConstScalar(g, add->inputs[1 - side]);
      if (!eps || !(*eps >= 0) || !std::isfinite(*eps)) continue;
      const ir::Op* mean = ProducerWithoutActivation(g, add->inputs[side], tfl::BuiltinOperator_MEAN);
      if (!mean || mean->inputs.size() != 2 || !IsSquareOf(g, mean->inputs[0], x)) continue;
      const auto* o = mean->options.AsReducerOptions();
      const std::vector<int64_t> raw = ConstInts(g, mean->inputs[1]);
      const int rank = g.tensors[x].rank();
      if (!o || !o->keep_dims || raw.empty()) continue;
      std::vector<int32_t> axes;
      bool ok = true;
      for (int64_t a : raw) {
        ok = ok && a >= -rank && a < rank;
        axes.push_back(static_cast<int32_t>(a < 0 ? a + rank : a));
      }
      if (!ok) continue;
      std::sort(axes.begin(), axes.end());
      axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
      return RmsMatch{x, axes, *eps, y.code == tfl::BuiltinOperator_DIV};
    }
  }
  return std::nullopt;
}

class RmsNormScaleFirstPass final : public PatternPass<RmsMatch> {
 public:
  RmsNormScaleFirstPass()
      : PatternPass({"rmsnorm-scale-first", Exactness::kExact,
                     "float32 x * RSQRT(MEAN(x^2) + eps) (or x / SQRT(...)), keep_dims MEAN, eps a constant; x scaled "
                     "by a per-row power of two and eps by its square"},
                    {tfl::BuiltinOperator_MUL, tfl::BuiltinOperator_DIV}) {}

 private:
  std::optional<RmsMatch> Match(const OpSite& site) const override { return MatchRms(site.graph(), site.op); }

  std::string Rewrite(OpSite& site, const RmsMatch& m) const override {
    GraphEdit& edit = site.edit;
    const std::string tag = std::to_string(site.node);
    builder::GraphBuilder& b = edit.b();
    const int r = b.Div(edit.ConstF32("one_" + tag, {}, {1.0f}), PowerOfTwoRowScale(edit, m.x, m.axes, tag));
    const int xs = b.Mul(m.x, r);
    const int ms = b.Mean(b.Mul(xs, xs), m.axes, true);
    const int eps_s = b.Mul(b.Mul(edit.ConstF32("eps_" + tag, {}, {m.eps}), r), r);
    const int ve = b.Add(ms, eps_s);
    const int y2 = m.sqrt_div ? b.Div(xs, b.Sqrt(ve)) : b.Mul(xs, b.Rsqrt(ve));
    edit.Replace(site.node, {y2});
    return fmt::format("'{}' scaled by a per-row power of two before squaring (axes [{}])", site.tensor(m.x).name,
                       fmt::join(m.axes, ","));
  }
};

}  // namespace

const Pass& RmsNormScaleFirst() {
  static const RmsNormScaleFirstPass pass;
  return pass;
}

}  // namespace gpuclean::rewrite::passes
