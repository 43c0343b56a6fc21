// div-identical-inputs: DIV(x, x) -> 1 at x's shape. ML Drift declines a DIV
// whose two inputs are the same tensor (LiteRT#9192). x / x is 1 wherever it
// is defined (x != 0, finite); at x = 0 or inf it is NaN, and the proof
// ignores positions where the original is NaN, so the pass is exact under
// the precondition that x is non-zero there.
//
// The 1 is a stored constant where that is harmless. A constant would itself
// be a finding where it became a graph output, or where a consumer would be
// left with constant inputs only (RESHAPE, or a binary op whose other side is
// a constant too: "all-const-inputs"), or where it is large; there the 1 is
// computed from x at runtime as x * 0 + 1, which is 1 for every finite x and
// NaN for inf/NaN x, like the original.
#include <fmt/format.h>

#include "rewrite/passes/passes.h"
#include "rewrite/pattern_pass.h"

namespace gpuclean::rewrite::passes {
namespace {

// Beyond this a stored constant costs more file size than two cheap ops.
constexpr int64_t kMaxOnesElements = 16384;

class DivIdenticalInputsPass final : public PatternPass<int> {
 public:
  DivIdenticalInputsPass()
      : PatternPass({"div-identical-inputs", Exactness::kExact,
                     "float32 DIV(x, x); assumes x != 0 and finite (there the original is NaN), elsewhere x/x = 1 "
                     "exactly"},
                    {tfl::BuiltinOperator_DIV}) {}

 private:
  // x, when the op is DIV(x, x) of float32 whose fused activation keeps 1.
  std::optional<int> Match(const OpSite& site) const override {
    const ir::Op& op = site.op;
    if (op.inputs.size() != 2 || op.inputs[0] != op.inputs[1]) return std::nullopt;
    const ir::Tensor& xt = site.tensor(op.inputs[0]);
    if (xt.dtype != tfl::TensorType_FLOAT32 || !xt.quant.empty()) return std::nullopt;
    // RELU, RELU6 and RELU_N1_TO_1 all keep 1; TANH and SIGN_BIT would not.
    const auto* options = op.options.AsDivOptions();
    const auto act = options ? options->fused_activation_function : tfl::ActivationFunctionType_NONE;
    if (act != tfl::ActivationFunctionType_NONE && act != tfl::ActivationFunctionType_RELU &&
        act != tfl::ActivationFunctionType_RELU6 && act != tfl::ActivationFunctionType_RELU_N1_TO_1)
      return std::nullopt;
    return op.inputs[0];
  }

  std::string Rewrite(OpSite& site, const int& x) const override {
    const ir::Tensor out = site.tensor(site.op.outputs.at(0));
    int replacement;
    std::string what;
    if (StoredConstantIsSafe(site.graph(), site.op.outputs[0])) {
      replacement = site.edit.ConstF32(fmt::format("ones_{}", site.node), out.shape,
                                       std::vector<float>(static_cast<size_t>(out.num_elements()), 1.0f));
      what = fmt::format("stored constant 1 ({} values)", out.num_elements());
    } else {
      replacement = site.b().Add(site.b().Mul(x, site.edit.SharedScalarF32("zero", 0.0f)),
                                 site.edit.SharedScalarF32("one", 1.0f));
      what = "x * 0 + 1 (kept runtime-valued)";
    }
    site.edit.Replace(site.node, {replacement});
    return what;
  }

 private:
  static bool StoredConstantIsSafe(const ir::Subgraph& g, int tensor) {
    if (g.IsGraphOutput(tensor) || g.tensors.at(tensor).num_elements() > kMaxOnesElements) return false;
    bool consumed = false;
    for (const ir::Op& op : g.ops) {
      if (std::find(op.inputs.begin(), op.inputs.end(), tensor) == op.inputs.end()) continue;
      consumed = true;
      const bool other_runtime = std::any_of(op.inputs.begin(), op.inputs.end(), [&](int in) {
        return in >= 0 && in != tensor && !IsConstantValued(g, in);
      });
      if (!other_runtime) return false;
    }
    return consumed;
  }
};

}  // namespace

const Pass& DivIdenticalInputs() {
  static const DivIdenticalInputsPass pass;
  return pass;
}

}  // namespace gpuclean::rewrite::passes
