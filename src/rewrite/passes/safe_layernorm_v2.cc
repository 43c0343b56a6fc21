// safe-layernorm-v2: LayerNorm / InstanceNorm as converters emit them
//   m = MEAN(x, A); d = x - m; v = MEAN(d*d, A); y = d * RSQRT(v + eps)
// overflow fp16 in the sums once |x| reaches a few hundred (FACTS.md §2).
// Rewritten to normalise xs = x / S with a per-row S over the same axes A,
// S the power of two at or above max(1, amax|x| / 8) (SafeLayerNorm v2):
//   (x - m) / sqrt(v + eps) == (xs - ms) / sqrt(vs + eps / S^2)
// so every intermediate stays O(1) and var * S^2 is never formed. With S a
// power of two the scaled computation is the original's scaled exactly, so
// in fp32 the result is bit-identical (below half's and float's subnormals).
//
// Also matched: the adaptive v1 form (Parakeet) that already normalises x/S
// but then rebuilds var * S * S and mean * S; it is rewritten to stay in the
// scaled domain: (x - ms S) / sqrt(vs S^2 + eps) == d / sqrt(vs + eps / S^2).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <variant>

#include "rewrite/passes/passes.h"
#include "rewrite/passes/row_scale.h"
#include "rewrite/pattern_pass.h"

namespace gpuclean::rewrite::passes {
namespace {

// Sorted non-negative axes of a keep_dims MEAN over `x`.
std::optional<std::vector<int32_t>> MeanAxes(const ir::Subgraph& g, const ir::Op& mean) {
  if (mean.inputs.size() != 2) return std::nullopt;
  const auto* o = mean.options.AsReducerOptions();
  if (!o || !o->keep_dims) return std::nullopt;
  const std::vector<int64_t> raw = ConstInts(g, mean.inputs[1]);
  const int rank = g.tensors[mean.inputs[0]].rank();
  if (raw.empty()) return std::nullopt;
  std::vector<int32_t> axes;
  for (int64_t a : raw) {
    if (a < -rank || a >= rank) return std::nullopt;
    axes.push_back(static_cast<int32_t>(a < 0 ? a + rank : a));
  }
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  return axes;
}

// MEAN(x, A, keep_dims) writing `t`: {x, A}.
std::optional<std::pair<int, std::vector<int32_t>>> MeanOf(const ir::Subgraph& g, int t) {
  const ir::Op* mean = ProducerWithoutActivation(g, t, tfl::BuiltinOperator_MEAN);
  if (!mean) return std::nullopt;
  auto axes = MeanAxes(g, *mean);
  if (!axes) return std::nullopt;
  return std::make_pair(mean->inputs[0], *axes);
}

// Whether `sq` is d^2 for d = x - m, in any of the spellings converters use.
bool IsSquareOf(const ir::Subgraph& g, int sq, int d, int x, int m) {
  if (const ir::Op* op = ProducerWithoutActivation(g, sq, tfl::BuiltinOperator_MUL))
    return op->inputs[0] == d && op->inputs[1] == d;
  if (const ir::Op* op = ProducerWithoutActivation(g, sq, tfl::BuiltinOperator_SQUARE)) return op->inputs[0] == d;
  if (const ir::Op* op = ProducerWithoutActivation(g, sq, tfl::BuiltinOperator_POW))
    return op->inputs[0] == d && ConstScalar(g, op->inputs[1]) == 2.0f;
  if (const ir::Op* op = ProducerWithoutActivation(g, sq, tfl::BuiltinOperator_SQUARED_DIFFERENCE))
    return (op->inputs[0] == x && op->inputs[1] == m) || (op->inputs[0] == m && op->inputs[1] == x);
  return false;
}

// y = d * RSQRT(ve) or d / SQRT(ve): {d, ve}.
std::optional<std::pair<int, int>> NormalizedBy(const ir::Subgraph& g, const ir::Op& y) {
  if (y.inputs.size() != 2) return std::nullopt;
  if (y.code == tfl::BuiltinOperator_MUL) {
    const auto* o = y.options.AsMulOptions();
    if (o && o->fused_activation_function != tfl::ActivationFunctionType_NONE) return std::nullopt;
    for (int side = 0; side < 2; ++side)
      if (const ir::Op* r = ProducerWithoutActivation(g, y.inputs[side], tfl::BuiltinOperator_RSQRT))
        return std::make_pair(y.inputs[1 - side], r->inputs[0]);
  } else if (y.code == tfl::BuiltinOperator_DIV) {
    const auto* o = y.options.AsDivOptions();
    if (o && o->fused_activation_function != tfl::ActivationFunctionType_NONE) return std::nullopt;
    if (const ir::Op* s = ProducerWithoutActivation(g, y.inputs[1], tfl::BuiltinOperator_SQRT))
      return std::make_pair(y.inputs[0], s->inputs[0]);
  }
  return std::nullopt;
}

// ve = v + eps with eps a constant scalar: {v, eps}.
std::optional<std::pair<int, float>> PlusEps(const ir::Subgraph& g, int ve) {
  const ir::Op* add = ProducerWithoutActivation(g, ve, tfl::BuiltinOperator_ADD);
  if (!add || add->inputs.size() != 2) return std::nullopt;
  for (int side = 0; side < 2; ++side) {
    const std::optional<float> eps = ConstScalar(g, add->inputs[1 - side]);
    if (eps && *eps >= 0 && std::isfinite(*eps)) return std::make_pair(add->inputs[side], *eps);
  }
  return std::nullopt;
}

// The plain decomposition: {x, axes, eps}.
struct Plain {
  int x;
  std::vector<int32_t> axes;
  float eps;
  bool sqrt_div;  // d / SQRT(...): kept, so the rounding is the original's
};

std::optional<Plain> MatchPlain(const ir::Subgraph& g, const ir::Op& y) {
  const auto norm = NormalizedBy(g, y);
  if (!norm) return std::nullopt;
  const auto [d, ve] = *norm;
  const auto plus = PlusEps(g, ve);
  if (!plus) return std::nullopt;
  const ir::Op* sub = ProducerWithoutActivation(g, d, tfl::BuiltinOperator_SUB);
  if (!sub || sub->inputs.size() != 2) return std::nullopt;
  const int x = sub->inputs[0], m = sub->inputs[1];
  const auto mean = MeanOf(g, m);
  const auto var = MeanOf(g, plus->first);
  if (!mean || !var || mean->first != x || mean->second != var->second) return std::nullopt;
  if (!IsSquareOf(g, var->first, d, x, m)) return std::nullopt;
  if (g.tensors[x].dtype != tfl::TensorType_FLOAT32) return std::nullopt;
  return Plain{x, mean->second, plus->second, y.code == tfl::BuiltinOperator_DIV};
}

// a * b in either order, or nullopt.
std::optional<std::pair<int, int>> Product(const ir::Subgraph& g, int t) {
  const ir::Op* mul = ProducerWithoutActivation(g, t, tfl::BuiltinOperator_MUL);
  if (!mul || mul->inputs.size() != 2) return std::nullopt;
  return std::make_pair(mul->inputs[0], mul->inputs[1]);
}

// The v1 form: xs = x / s, ms = MEAN(xs), d = xs - ms (-1: not in the
// graph), vs = MEAN(d^2).
struct Rebuilt {
  int xs, ms, d, vs, s;
  float eps;
};

std::optional<Rebuilt> MatchRebuilt(const ir::Subgraph& g, const ir::Op& y) {
  const auto norm = NormalizedBy(g, y);
  if (!norm) return std::nullopt;
  const auto [dx, ve] = *norm;
  const auto plus = PlusEps(g, ve);
  if (!plus) return std::nullopt;
  // var = (vs * s) * s or vs * (s * s), operands in any order.
  const auto outer = Product(g, plus->first);
  if (!outer) return std::nullopt;
  std::optional<std::pair<int, int>> vs_s;  // {vs, s}
  for (int side = 0; side < 2 && !vs_s; ++side) {
    const int a = side ? outer->second : outer->first, b = side ? outer->first : outer->second;
    if (const auto inner = Product(g, a)) {
      if (inner->first == b)
        vs_s = std::make_pair(inner->second, b);
      else if (inner->second == b)
        vs_s = std::make_pair(inner->first, b);
      else if (inner->first == inner->second)
        vs_s = std::make_pair(b, inner->first);
    }
  }
  if (!vs_s) return std::nullopt;
  const auto [vs, s] = *vs_s;
  // dx = x - ms * s with ms = MEAN(xs), xs = x / s.
  const ir::Op* sub = ProducerWithoutActivation(g, dx, tfl::BuiltinOperator_SUB);
  if (!sub || sub->inputs.size() != 2) return std::nullopt;
  const int x = sub->inputs[0];
  const auto mu = Product(g, sub->inputs[1]);
  if (!mu) return std::nullopt;
  const int ms = mu->first == s ? mu->second : mu->second == s ? mu->first : -1;
  const auto mean = MeanOf(g, ms);
  const auto var = MeanOf(g, vs);
  if (!mean || !var || mean->second != var->second) return std::nullopt;
  const int xs = mean->first;
  const ir::Op* div = ProducerWithoutActivation(g, xs, tfl::BuiltinOperator_DIV);
  if (!div || div->inputs[0] != x || div->inputs[1] != s) return std::nullopt;
  // vs = MEAN(d^2) with d = xs - ms; SQUARED_DIFFERENCE(xs, ms) leaves no d
  // tensor to reuse (-1: the rewrite builds it).
  if (!IsSquareOf(g, var->first, -1, xs, ms)) {
    const int p = g.Producer(var->first);
    if (p < 0 || g.ops[p].inputs.empty()) return std::nullopt;
    const int d = g.ops[p].inputs[0];
    const ir::Op* dsub = ProducerWithoutActivation(g, d, tfl::BuiltinOperator_SUB);
    if (!dsub || dsub->inputs[0] != xs || dsub->inputs[1] != ms || !IsSquareOf(g, var->first, d, xs, ms))
      return std::nullopt;
    if (g.tensors[x].dtype != tfl::TensorType_FLOAT32) return std::nullopt;
    return Rebuilt{xs, ms, d, vs, s, plus->second};
  }
  if (g.tensors[x].dtype != tfl::TensorType_FLOAT32) return std::nullopt;
  return Rebuilt{xs, ms, -1, vs, s, plus->second};
}

class SafeLayerNormV2Pass final : public PatternPass<std::variant<Plain, Rebuilt>> {
 public:
  SafeLayerNormV2Pass()
      : PatternPass({"safe-layernorm-v2", Exactness::kExact,
                     "float32 (x - MEAN(x)) * RSQRT(MEAN((x - MEAN(x))^2) + eps) (or / SQRT) with both means over the "
                     "same keep_dims axes and eps a constant, or the v1 form that rebuilds var * S * S; eps / S^2 "
                     "keeps it exact"},
                    {tfl::BuiltinOperator_MUL, tfl::BuiltinOperator_DIV}) {}

 private:
  std::optional<std::variant<Plain, Rebuilt>> Match(const OpSite& site) const override {
    if (auto plain = MatchPlain(site.graph(), site.op)) return std::move(*plain);
    if (auto v1 = MatchRebuilt(site.graph(), site.op)) return *v1;
    return std::nullopt;
  }

  std::string Rewrite(OpSite& site, const std::variant<Plain, Rebuilt>& found) const override {
    GraphEdit& edit = site.edit;
    builder::GraphBuilder& b = edit.b();
    const std::string tag = std::to_string(site.node);
    if (const auto* plain = std::get_if<Plain>(&found)) {
      const int x = plain->x;
      const std::vector<int32_t>& axes = plain->axes;
      const int r = b.Div(edit.ConstF32("one_" + tag, {}, {1.0f}), PowerOfTwoRowScale(edit, x, axes, tag));
      // x * r, eps * r * r: products with a power of two, exact in float.
      const int xs = b.Mul(x, r);
      const int ms = b.Mean(xs, axes, true);
      const int d = b.Sub(xs, ms);
      const int vs = b.Mean(b.Mul(d, d), axes, true);
      const int eps_s = b.Mul(b.Mul(edit.ConstF32("eps_" + tag, {}, {plain->eps}), r), r);
      const int ve = b.Add(vs, eps_s);
      const int y2 = plain->sqrt_div ? b.Div(d, b.Sqrt(ve)) : b.Mul(d, b.Rsqrt(ve));
      edit.Replace(site.node, {y2});
      return fmt::format("normalisation of '{}' over axes [{}] runs on x / S, S = 2^n >= amax/8", site.tensor(x).name,
                         fmt::join(axes, ","));
    }
    const Rebuilt& v1 = std::get<Rebuilt>(found);
    const int d = v1.d >= 0 ? v1.d : b.Sub(v1.xs, v1.ms);
    const int y2 = b.Mul(d, b.Rsqrt(b.Add(v1.vs, ScaledEps(edit, v1.eps, v1.s, tag))));
    edit.Replace(site.node, {y2});
    return fmt::format("scaled LayerNorm stays scaled: no var * S^2 from '{}'", site.tensor(v1.vs).name);
  }

 private:
  // eps / S^2 as (sqrt(eps) / S)^2: S^2 itself would overflow half for S > 256.
  static int ScaledEps(GraphEdit& edit, float eps, int s, const std::string& tag) {
    const int e = edit.b().Div(edit.ConstF32("sqrt_eps_" + tag, {}, {std::sqrt(eps)}), s);
    return edit.b().Mul(e, e);
  }
};

}  // namespace

// Per row over `axes`: the smallest power of two S >= max(1, amax|x| / 8),
// capped at 2^15 (half's range needs no more). A power of two because x / S
// and everything derived from it are then exact in float: the rewritten
// norm gives the original's fp32 bits, not just its value within rounding.
// Built without POW, CEIL or bit tricks the GPU lacks: with t = amax / 8,
// step_k = min(1, min(relu(t * 2^-k - 1), 2^-12) * 2^24) is 1 exactly when
// t > 2^k (t * 2^-k is exact, and the smallest float above 1 is 1 + 2^-23),
// and S = max(1, max_k step_k * 2^(k+1)). The excess is clamped before it
// is scaled, and 2^24 applied as 4096 * 4096: no constant and no
// intermediate leaves half's range (at most 4096), so an fp16 run holds no
// inf for bisect to mistake for the break.
int PowerOfTwoRowScale(GraphEdit& edit, int x, const std::vector<int32_t>& axes, const std::string& tag) {
  constexpr int kSteps = 15;
  builder::GraphBuilder& b = edit.b();
  const int amax = b.ReduceMax(b.Abs(x), axes, true);
  const builder::Shape row_shape = edit.graph().tensors[amax].shape;
  const int32_t rows = static_cast<int32_t>(edit.graph().tensors[amax].num_elements());
  std::vector<float> down(kSteps), up(kSteps);
  for (int k = 0; k < kSteps; ++k) down[k] = std::ldexp(1.0f, -k), up[k] = std::ldexp(1.0f, k + 1);
  const int t = b.Mul(b.Reshape(amax, {rows, 1}), edit.ConstF32("one_eighth_" + tag, {}, {0.125f}));
  const int excess =
      b.Sub(b.Mul(t, edit.ConstF32("pow2_down_" + tag, {kSteps}, down)), edit.ConstF32("unit_" + tag, {}, {1.0f}));
  const int k4096 = edit.ConstF32("k4096_" + tag, {}, {4096.0f});
  const int clamped = b.Minimum(b.Relu(excess), edit.ConstF32("pow2_m12_" + tag, {}, {std::ldexp(1.0f, -12)}));
  const int step = b.Minimum(b.Mul(b.Mul(clamped, k4096), k4096), edit.ConstF32("step_one_" + tag, {}, {1.0f}));
  const int s = b.Maximum(b.ReduceMax(b.Mul(step, edit.ConstF32("pow2_up_" + tag, {kSteps}, up)), {1}, true),
                          edit.ConstF32("floor_one_" + tag, {}, {1.0f}));
  return b.Reshape(s, row_shape);
}

const Pass& SafeLayerNormV2() {
  static const SafeLayerNormV2Pass pass;
  return pass;
}

}  // namespace gpuclean::rewrite::passes
