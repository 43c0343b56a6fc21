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

#include "rewrite/graph_edit.h"
#include "rewrite/passes/passes.h"

namespace gpuclean::rewrite::passes {
namespace {

// Beyond this a stored constant costs more file size than two cheap ops.
constexpr int64_t kMaxOnesElements = 16384;

class DivIdenticalInputsPass final : public Pass {
 public:
  std::string_view id() const override { return "div-identical-inputs"; }
  Exactness exactness() const override { return Exactness::kExact; }
  std::string_view contract() const override {
    return "float32 DIV(x, x); assumes x != 0 and finite (there the original is NaN), elsewhere x/x = 1 exactly";
  }

  PassResult Apply(ir::Model& model, const PassOptions&) const override {
    PassResult result;
    GraphEdit edit(model, std::string(id()));
    int zero = -1, one = -1;
    const size_t count = edit.graph().ops.size();
    for (size_t i = 0; i < count; ++i) {
      const ir::Op& op = edit.graph().ops[i];
      if (op.code != tfl::BuiltinOperator_DIV || op.inputs.size() != 2 || op.inputs[0] != op.inputs[1]) continue;
      const int x = op.inputs[0], out = op.outputs.at(0);
      const ir::Tensor& xt = edit.graph().tensors.at(x);
      if (xt.dtype != tfl::TensorType_FLOAT32 || !xt.quant.empty()) continue;
      // RELU, RELU6 and RELU_N1_TO_1 all keep 1; TANH and SIGN_BIT would not.
      const auto* options = op.options.AsDivOptions();
      const auto act = options ? options->fused_activation_function : tfl::ActivationFunctionType_NONE;
      if (act != tfl::ActivationFunctionType_NONE && act != tfl::ActivationFunctionType_RELU &&
          act != tfl::ActivationFunctionType_RELU6 && act != tfl::ActivationFunctionType_RELU_N1_TO_1)
        continue;
      const ir::Tensor outt = edit.graph().tensors.at(out);
      int replacement;
      std::string what;
      if (StoredConstantIsSafe(edit.graph(), out)) {
        replacement = edit.ConstF32(fmt::format("ones_{}", i), outt.shape,
                                    std::vector<float>(static_cast<size_t>(outt.num_elements()), 1.0f));
        what = fmt::format("stored constant 1 ({} values)", outt.num_elements());
      } else {
        if (zero < 0) zero = edit.ConstF32("zero", {}, {0.0f}), one = edit.ConstF32("one", {}, {1.0f});
        replacement = edit.b().Add(edit.b().Mul(x, zero), one);
        what = "x * 0 + 1 (kept runtime-valued)";
      }
      result.sites.push_back({static_cast<int>(i), "DIV", what});
      edit.Replace(static_cast<int>(i), {replacement});
    }
    edit.Commit();
    return result;
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
