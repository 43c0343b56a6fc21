// arg-min-to-arg-max: ARG_MIN(x, axis) -> ARG_MAX(NEG(x), axis). LiteRT.js
// 2.5.3's WebGPU delegate (measured), ML Drift 2.2.0's builder and its IR
// path (their op switches) reject ARG_MIN and take ARG_MAX. For float32,
// negation is exact and reverses the order (-0 and +0 stay equal), so the
// first smallest element of x is the first largest of -x: the same index
// (exact). Integers are left alone: -INT_MIN wraps.
#include <fmt/format.h>

#include "rewrite/passes/passes.h"
#include "rewrite/pattern_pass.h"

namespace gpuclean::rewrite::passes {
namespace {

class ArgMinToArgMaxPass final : public OpPass {
 public:
  ArgMinToArgMaxPass()
      : OpPass({"arg-min-to-arg-max", Exactness::kExact,
                "float32 ARG_MIN with a constant axis; negation reverses the order, so the first minimum of x is "
                "the first maximum of -x"},
               {tfl::BuiltinOperator_ARG_MIN}) {}

 private:
  std::optional<std::string> Visit(OpSite& site) const override {
    if (site.op.inputs.size() != 2 || site.op.outputs.size() != 1) return std::nullopt;
    const int x = site.op.inputs[0];
    if (site.tensor(x).dtype != tfl::TensorType_FLOAT32 || !site.tensor(x).quant.empty()) return std::nullopt;
    if (!site.tensor(site.op.inputs[1]).is_const()) {
      site.Skip({site.tensor(site.op.inputs[1]).name}, "a runtime axis");
      return std::nullopt;
    }
    const std::vector<int64_t> axis = ConstInts(site.graph(), site.op.inputs[1]);
    if (axis.size() != 1) return std::nullopt;
    const ir::DType out_type = site.tensor(site.op.outputs[0]).dtype;
    builder::GraphBuilder& b = site.b();
    const int y = b.ArgMax(b.Neg(x), static_cast<int32_t>(axis[0]), out_type);
    site.edit.Replace(site.node, {y});
    return fmt::format("ARG_MAX(NEG(x)) over axis {}", axis[0]);
  }
};

}  // namespace

const Pass& ArgMinToArgMax() {
  static const ArgMinToArgMaxPass pass;
  return pass;
}

}  // namespace gpuclean::rewrite::passes
