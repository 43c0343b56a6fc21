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
#include <map>
#include <tuple>

#include "gpuclean/error.h"
#include "rewrite/graph_edit.h"
#include "rewrite/passes/passes.h"

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
      default:
        return false;
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

class SelectToBlendPass final : public Pass {
 public:
  std::string_view id() const override { return "select-to-blend"; }
  Exactness exactness() const override { return Exactness::kApprox; }
  double bound(const PassOptions&) const override { return kExactTolerance; }
  std::string_view contract() const override {
    return "SELECT(_V2) on float32 whose selected values are within +-65504: clamp + a*m + b*(1-m) is bit-exact; "
           "constant fills beyond fp16 "
           "(-1e9, -inf) become -30000 only before a SOFTMAX (beta >= 1), where both underflow to 0 if an "
           "unmasked logit in the row exceeds -29896";
  }

  PassResult Apply(ir::Model& model, const PassOptions&) const override {
    PassResult result;
    GraphEdit edit(model, std::string(id()));
    std::map<std::pair<int, builder::Shape>, std::pair<int, int>> masks;
    const size_t count = edit.graph().ops.size();
    for (size_t i = 0; i < count; ++i) {
      const ir::Op& op = edit.graph().ops[i];
      const bool v1 = op.code == tfl::BuiltinOperator_SELECT;
      if ((!v1 && op.code != tfl::BuiltinOperator_SELECT_V2) || op.inputs.size() != 3) continue;
      const int cond = op.inputs[0], out = op.outputs.at(0);
      int operand[2] = {op.inputs[1], op.inputs[2]};
      const ir::Tensor ot = edit.graph().tensors.at(out), ct = edit.graph().tensors.at(cond);
      if (ot.dtype != tfl::TensorType_FLOAT32 || !ot.quant.empty() || ot.rank() > 4 ||
          ct.dtype != tfl::TensorType_BOOL)
        continue;

      // Operands that are constants: their values, made fp16-finite.
      bool skip = false, filled = false;
      std::vector<float> fill_values[2];
      for (int k = 0; k < 2 && !skip; ++k) {
        if (!IsConstantValued(edit.graph(), operand[k])) continue;
        std::vector<float> values;
        try {
          const npy::Array a = EvaluateConstant(edit.graph(), operand[k]);
          if (a.dtype != tfl::TensorType_FLOAT32) throw Error(ErrorKind::kUnsupported, "not float32");
          values.resize(a.data.size() / 4);
          std::memcpy(values.data(), a.data.data(), values.size() * 4);
        } catch (const Error&) {
          skip = true;
          break;
        }
        bool changed = false;
        const auto safe = Fp16FiniteFill(std::move(values), changed);
        if (!safe) skip = true;
        else if (changed) fill_values[k] = *safe, filled = true;
      }
      if (skip || (filled && !ReachesSoftmax(edit.graph(), out))) continue;

      builder::GraphBuilder& b = edit.b();
      for (int k = 0; k < 2; ++k)
        if (!fill_values[k].empty())
          operand[k] = edit.ConstF32(fmt::format("fill_{}_{}", i, k), edit.graph().tensors.at(operand[k]).shape,
                                     fill_values[k]);
      // SELECT (v1) with a rank-1 condition picks along the first axis.
      const int operand_rank = edit.graph().tensors.at(operand[0]).rank();
      builder::Shape mask_shape = ct.shape;
      if (v1 && ct.rank() == 1 && operand_rank > 1) {
        mask_shape.assign(static_cast<size_t>(operand_rank), 1);
        mask_shape[0] = ct.shape[0];
      }
      int m, inv;
      if (IsConstantValued(edit.graph(), cond)) {
        // Stored as m and 1 - m, so no op is left with constant inputs only.
        const npy::Array c = EvaluateConstant(edit.graph(), cond);
        std::vector<float> mf, inv_f;
        for (uint8_t v : c.data) mf.push_back(v ? 1.0f : 0.0f), inv_f.push_back(v ? 0.0f : 1.0f);
        m = edit.ConstF32(fmt::format("mask_{}", i), mask_shape, mf);
        inv = edit.ConstF32(fmt::format("inv_mask_{}", i), mask_shape, inv_f);
      } else {
        auto it = masks.find({cond, mask_shape});
        if (it == masks.end()) {
          const int one = edit.SharedScalarF32("one", 1.0f);
          int mk = b.Cast(cond, tfl::TensorType_FLOAT32);
          if (mask_shape != ct.shape) mk = b.Reshape(mk, mask_shape);
          it = masks.emplace(std::make_pair(cond, mask_shape), std::make_pair(mk, b.Sub(one, mk))).first;
        }
        std::tie(m, inv) = it->second;
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
      result.sites.push_back({static_cast<int>(i), std::string(v1 ? "SELECT" : "SELECT_V2"),
                              filled ? "a*m + b*(1-m), fill stored as +-30000 (feeds SOFTMAX)" : "a*m + b*(1-m)"});
      edit.Replace(static_cast<int>(i), {y});
    }
    edit.Commit();
    return result;
  }
};

}  // namespace

const Pass& SelectToBlend() {
  static const SelectToBlendPass pass;
  return pass;
}

}  // namespace gpuclean::rewrite::passes
