// select-to-blend: SELECT / SELECT_V2(cond, a, b) -> a * m + b * (1 - m) with
// m = CAST(cond, float32). The GPU delegate rejects both SELECTs (PReLU, ELU
// and where-masking lower to them) but takes CAST bool -> float32 and the
// arithmetic. With m in {0, 1} every product is a * 1, a * 0, b * 1 or
// b * 0, and x + 0 = x, so the blend is bit-exact wherever a and b are
// finite. inf * 0 is NaN, and an unselected branch does overflow in practice
// (ELU's exp(x) - 1 at large x; in fp16 from x > 11), so runtime operands are
// clamped to the fp16 range first: exact where the selected value is within
// +-65504, which an fp16 GPU needs anyway.
//
// Masking fills (-1e9, -inf) are finite in float32 but not in fp16, where the
// GPU computes: -1e9 becomes -inf there and -inf * 0 = NaN. A constant
// operand with values beyond fp16 range is stored as +-30000 instead, which
// changes the values the mask selects, so it is only done where the result
// reaches a SOFTMAX through layout ops alone: there exp(-30000 - max) and
// exp(-1e9 - max) both underflow to 0 as long as an unmasked logit in the row
// exceeds -29896 (beta = 1), and a fully masked row is uniform either way
// (the original is NaN there for -inf). Otherwise such a SELECT is left alone.
// The pass is marked approx for that value change; its bound is the exact
// tolerance.
#include <fmt/format.h>

#include <cmath>
#include <cstring>

#include "gpuclean/error.h"
#include "gpuclean/shapes.h"
#include "rewrite/passes/passes.h"
#include "rewrite/pattern_pass.h"

namespace gpuclean::rewrite::passes {
namespace {

constexpr float kFp16Max = 65504.0f;
constexpr float kFill = 30000.0f;

bool ReachesSoftmax(const ir::Subgraph& g, int tensor) {
  for (int hops = 0; hops < 8; ++hops) {
    const int c = SoleConsumer(g, tensor);
    if (c < 0) return false;
    const ir::Op& op = g.ops[c];
    switch (op.code) {
      case tfl::BuiltinOperator_SOFTMAX: {
        const auto* o = op.options.AsSoftmaxOptions();
        return !o || o->beta >= 1.0f;
      }
      case tfl::BuiltinOperator_RESHAPE:
      case tfl::BuiltinOperator_TRANSPOSE:
      case tfl::BuiltinOperator_SQUEEZE:
      case tfl::BuiltinOperator_EXPAND_DIMS:
        if (op.inputs.empty() || op.inputs[0] != tensor) return false;
        tensor = op.outputs.at(0);
        break;
      default: return false;
    }
  }
  return false;
}

// A constant operand made fp16-finite: nullopt when it holds NaN; `changed`
// tells whether any value moved.
std::optional<std::vector<float>> Fp16FiniteFill(std::vector<float> values, bool& changed) {
  changed = false;
  for (float& v : values) {
    if (std::isnan(v)) return std::nullopt;
    if (std::fabs(v) > kFp16Max) v = std::copysign(kFill, v), changed = true;
  }
  return values;
}

// Per operand (a, b): its values made fp16-finite where a constant moved,
// else empty.
struct Fills {
  std::vector<float> values[2];
  bool filled = false;
};

class SelectToBlendPass final : public PatternPass<Fills> {
 public:
  SelectToBlendPass()
      : PatternPass({"select-to-blend", Exactness::kApprox,
                     "SELECT(_V2) on float32 whose selected values are within +-65504: clamp + a*m + b*(1-m) is "
                     "bit-exact; constant fills beyond fp16 (-1e9, -inf) become -30000 only before a SOFTMAX (beta >= "
                     "1), where both underflow to 0 if an unmasked logit in the row exceeds -29896"},
                    {tfl::BuiltinOperator_SELECT, tfl::BuiltinOperator_SELECT_V2}) {}
  double bound(const PassOptions&) const override { return kExactTolerance; }

 private:
  std::optional<Fills> Match(const OpSite& site) const override {
    const ir::Op& op = site.op;
    if (op.inputs.size() != 3) return std::nullopt;
    const ir::Subgraph& g = site.graph();
    const int cond = op.inputs[0], out = op.outputs.at(0);
    const int operand[2] = {op.inputs[1], op.inputs[2]};
    const ir::Tensor &ot = g.tensors.at(out), &ct = g.tensors.at(cond);
    if (ot.dtype != tfl::TensorType_FLOAT32 || !ot.quant.empty() || ot.rank() > 4 || ct.dtype != tfl::TensorType_BOOL)
      return std::nullopt;

    // Operands that are constants: their values, made fp16-finite.
    Fills fills;
    for (int k = 0; k < 2; ++k) {
      if (!IsConstantValued(g, operand[k])) continue;
      std::vector<float> values;
      try {
        const npy::Array a = EvaluateConstant(g, operand[k]);
        if (a.dtype != tfl::TensorType_FLOAT32) throw Error(ErrorKind::kUnsupported, "not float32");
        values.resize(a.data.size() / 4);
        std::memcpy(values.data(), a.data.data(), values.size() * 4);
      } catch (const Error&) {
        return std::nullopt;
      }
      bool changed = false;
      auto safe = Fp16FiniteFill(std::move(values), changed);
      if (!safe) return std::nullopt;
      if (changed) fills.values[k] = std::move(*safe), fills.filled = true;
    }
    if (fills.filled && !ReachesSoftmax(g, out)) return std::nullopt;
    return fills;
  }

  std::string Rewrite(OpSite& site, const Fills& fills) const override {
    GraphEdit& edit = site.edit;
    const ir::Op& op = site.op;
    const bool v1 = op.code == tfl::BuiltinOperator_SELECT;
    const int cond = op.inputs[0];
    int operand[2] = {op.inputs[1], op.inputs[2]};
    const builder::Shape cond_shape = site.tensor(cond).shape;
    builder::GraphBuilder& b = edit.b();
    for (int k = 0; k < 2; ++k)
      if (!fills.values[k].empty())
        operand[k] =
            edit.ConstF32(fmt::format("fill_{}_{}", site.node, k), site.tensor(operand[k]).shape, fills.values[k]);
    // SELECT (v1) with a rank-1 condition picks along the first axis.
    const int operand_rank = site.tensor(operand[0]).rank();
    builder::Shape mask_shape = cond_shape;
    if (v1 && cond_shape.size() == 1 && operand_rank > 1) {
      mask_shape.assign(static_cast<size_t>(operand_rank), 1);
      mask_shape[0] = cond_shape[0];
    }
    int m, inv;
    if (IsConstantValued(edit.graph(), cond)) {
      // Stored as m and 1 - m, so no op is left with constant inputs only.
      const npy::Array c = EvaluateConstant(edit.graph(), cond);
      std::vector<float> mf, inv_f;
      for (uint8_t v : c.data) mf.push_back(v ? 1.0f : 0.0f), inv_f.push_back(v ? 0.0f : 1.0f);
      m = edit.ConstF32(fmt::format("mask_{}", site.node), mask_shape, mf);
      inv = edit.ConstF32(fmt::format("inv_mask_{}", site.node), mask_shape, inv_f);
    } else {
      // One m and 1 - m per condition and mask shape, whatever number of SELECTs read them.
      const std::string key = fmt::format("{} {}", cond, ir::FormatShape(mask_shape));
      m = site.Shared("mask " + key, [&] {
        edit.SharedScalarF32("one", 1.0f);
        const int mk = b.Cast(cond, tfl::TensorType_FLOAT32);
        return mask_shape != cond_shape ? b.Reshape(mk, mask_shape) : mk;
      });
      inv = site.Shared("inv_mask " + key, [&] { return b.Sub(edit.SharedScalarF32("one", 1.0f), m); });
    }
    // Runtime operands are clamped to the fp16 range so an unselected
    // overflow (exp(x) - 1 of an ELU at large x) meets a 0, not inf * 0.
    for (int k = 0; k < 2; ++k) {
      if (IsConstantValued(edit.graph(), operand[k])) continue;
      const int fp16_max = edit.SharedScalarF32("fp16_max", kFp16Max);
      const int fp16_lowest = edit.SharedScalarF32("fp16_lowest", -kFp16Max);
      operand[k] = b.Minimum(b.Maximum(operand[k], fp16_lowest), fp16_max);
    }
    const int y = b.Add(b.Mul(operand[0], m), b.Mul(operand[1], inv));
    edit.Replace(site.node, {y});
    return fills.filled ? "a*m + b*(1-m), fill stored as +-30000 (feeds SOFTMAX)" : "a*m + b*(1-m)";
  }
};

}  // namespace

const Pass& SelectToBlend() {
  static const SelectToBlendPass pass;
  return pass;
}

}  // namespace gpuclean::rewrite::passes
