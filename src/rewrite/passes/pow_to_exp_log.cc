// pow-to-exp-log: POW is rejected by the GPU delegate. With a scalar
// constant exponent g:
//   g = 1, 2, 3, 4   -> x, x*x, x*x*x, (x*x)*(x*x)   (any sign of x)
//   g = 0.5, -0.5    -> SQRT(x), RSQRT(x)
//   g = -1           -> 1 / x
//   other non-integer g -> EXP(g * LOG(MAXIMUM(x, eps)))
// and with a scalar constant base c > 0: POW(c, x) -> EXP(ln(c) * x).
// Other integer exponents are left alone: for negative x the exp/log form
// would give a number where the original has a sign (x^5 < 0), and a long
// MUL chain is no better than the CPU.
//
// Bound. For non-integer g the original is NaN at x < 0 (the proof ignores
// those positions), so the precondition is x >= 0, and x > 0 when g < 0
// (x^g is inf at 0; the clamp makes it finite). exp(g ln x) in float32:
// ln x carries ~1 ulp relative, the product another, so the argument y is
// off by about |y| 2^-23 absolute, which exp turns into a relative error of
// |y| 2^-23 plus its own ulp or two. A finite float32 result has |y| <= 89,
// so the relative error is at most about (89 + 3) 2^-23 = 1.1e-5 of the
// element, a few ulp more on runtimes with approximate exp/log. The clamp
// eps = 1e-30 (a normal float32; ln is exact there) changes only x < eps,
// where the original is at most eps^g and the rewrite is eps^g, an absolute
// error <= eps^0.15 = 3.2e-5 because g < 0.15 is not rewritten. Together
// below 1e-4 of max(1, max |x^g|). In fp16 eps flushes to 0, so on an fp16
// GPU the clamp is max(x, 0) and x = 0 relies on log(0) = -inf,
// exp(-inf) = 0, as IEEE half arithmetic gives.
#include <fmt/format.h>

#include <cmath>

#include "rewrite/passes/passes.h"
#include "rewrite/pattern_pass.h"

namespace gpuclean::rewrite::passes {
namespace {

constexpr float kEps = 1e-30f;
constexpr float kMinPositiveExponent = 0.15f;  // eps^g must stay below the bound

// The single value of a float32 constant whose elements are all equal.
std::optional<float> UniformConst(const ir::Subgraph& g, int tensor) {
  const std::vector<float> v = ConstFloats(g, tensor);
  if (v.empty() || !std::all_of(v.begin(), v.end(), [&](float e) { return e == v[0]; })) return std::nullopt;
  return v[0];
}

class PowToExpLogPass final : public OpPass {
 public:
  PowToExpLogPass()
      : OpPass({"pow-to-exp-log", Exactness::kApprox,
                "POW(x, g) with constant g (integer g only 1..4, -1; non-integer g needs x >= 0, x > 0 if g < 0, "
                "|g| >= 0.15) or POW(c > 0, x); exp/log rounding <= (|g ln x| + 3) 2^-23 <= 1.1e-5 relative plus "
                "the 1e-30 clamp <= 3.2e-5 absolute"},
               {tfl::BuiltinOperator_POW}) {}
  double bound(const PassOptions&) const override { return 1e-4; }

 private:
  std::optional<std::string> Visit(OpSite& site) const override {
    builder::GraphBuilder& b = site.b();
    const ir::Op& op = site.op;
    if (op.inputs.size() != 2) return std::nullopt;
    const int base = op.inputs[0], exponent = op.inputs[1], out = op.outputs.at(0);
    const ir::Tensor ot = site.graph().tensors.at(out);  // a copy: the builder appends tensors
    if (ot.dtype != tfl::TensorType_FLOAT32) return std::nullopt;
    const bool is_output = site.graph().IsGraphOutput(out);
    const std::optional<float> g = UniformConst(site.graph(), exponent);
    const std::optional<float> c = UniformConst(site.graph(), base);
    int y = -1;
    std::string what;
    if (g && !c && site.graph().tensors.at(base).shape == ot.shape) {
      const int x = base;
      const float e = *g;
      if (e == 1.0f && !is_output) {
        y = x, what = "x";
      } else if (e == 1.0f || e == 2.0f) {
        y = b.Mul(x, e == 1.0f ? site.edit.ConstF32(fmt::format("one_{}", site.node), {}, {1.0f}) : x);
        what = e == 1.0f ? "x * 1" : "x * x";
      } else if (e == 3.0f) {
        y = b.Mul(b.Mul(x, x), x), what = "x * x * x";
      } else if (e == 4.0f) {
        const int sq = b.Mul(x, x);
        y = b.Mul(sq, sq), what = "(x * x) * (x * x)";
      } else if (e == 0.5f) {
        y = b.Sqrt(x), what = "SQRT(x)";
      } else if (e == -0.5f) {
        y = b.Rsqrt(x), what = "RSQRT(x)";
      } else if (e == -1.0f) {
        y = b.Div(site.edit.ConstF32(fmt::format("one_{}", site.node), {}, {1.0f}), x), what = "1 / x";
      } else if (std::isfinite(e) && std::floor(e) != e && std::fabs(e) >= kMinPositiveExponent) {
        const int clamped = b.Maximum(x, site.edit.ConstF32(fmt::format("eps_{}", site.node), {}, {kEps}));
        y = b.Exp(b.Mul(b.Log(clamped), site.edit.ConstF32(fmt::format("gamma_{}", site.node), {}, {e})));
        what = fmt::format("EXP({} * LOG(MAXIMUM(x, 1e-30)))", e);
      }
    } else if (c && !g && *c > 0.0f && std::isfinite(*c) && site.graph().tensors.at(exponent).shape == ot.shape) {
      const float ln_c = std::log(*c);
      y = b.Exp(b.Mul(exponent, site.edit.ConstF32(fmt::format("ln_base_{}", site.node), {}, {ln_c})));
      what = fmt::format("EXP({} * x)", ln_c);
    }
    if (y < 0) return std::nullopt;
    site.edit.Replace(site.node, {y});
    return what;
  }
};

}  // namespace

const Pass& PowToExpLog() {
  static const PowToExpLogPass pass;
  return pass;
}

}  // namespace gpuclean::rewrite::passes
