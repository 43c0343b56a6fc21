// squeeze-to-reshape: SQUEEZE / EXPAND_DIMS -> RESHAPE to the output's
// static shape. Both only relabel the row-major elements, so the RESHAPE is
// the same op by another name (exact). LiteRT.js 2.5.3's WebGPU delegate
// and both ML Drift 2.2.0 builders reject SQUEEZE and EXPAND_DIMS (measured,
// and read from their op switches) but take RESHAPE; converters from
// TensorFlow emit SQUEEZE ahead of classifier heads and after pooling.
#include <fmt/format.h>

#include "rewrite/passes/passes.h"
#include "rewrite/pattern_pass.h"

namespace gpuclean::rewrite::passes {
namespace {

class SqueezeToReshapePass final : public OpPass {
 public:
  SqueezeToReshapePass()
      : OpPass({"squeeze-to-reshape", Exactness::kExact,
                "SQUEEZE / EXPAND_DIMS with static shapes and a runtime input; a RESHAPE to the output's shape moves "
                "no element"},
               {tfl::BuiltinOperator_SQUEEZE, tfl::BuiltinOperator_EXPAND_DIMS}) {}

 private:
  std::optional<std::string> Visit(OpSite& site) const override {
    if (site.op.inputs.empty() || site.op.outputs.size() != 1) return std::nullopt;
    const int x = site.op.inputs[0];
    const ir::Tensor in = site.tensor(x);
    const ir::Tensor out = site.tensor(site.op.outputs[0]);
    if (in.is_const()) return std::nullopt;  // const-fold folds it
    if (in.is_dynamic() || out.is_dynamic()) {
      site.Skip({in.name, out.name}, "a dynamic shape: the RESHAPE's target would be fixed at one size");
      return std::nullopt;
    }
    const int y = site.b().Reshape(x, out.shape);
    site.edit.Replace(site.node, {y});
    return fmt::format("RESHAPE to [{}]", fmt::join(out.shape, ", "));
  }
};

}  // namespace

const Pass& SqueezeToReshape() {
  static const SqueezeToReshapePass pass;
  return pass;
}

}  // namespace gpuclean::rewrite::passes
