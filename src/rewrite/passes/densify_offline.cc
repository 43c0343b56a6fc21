// densify-offline: DENSIFY of a sparse constant -> the dense constant stored
// in the file. The GPU delegates do not take DENSIFY (or a sparse tensor);
// the values are the same, only the storage changes, so the pass is exact.
#include <fmt/format.h>

#include "gpuclean/bytes.h"
#include "rewrite/passes/passes.h"
#include "rewrite/pattern_pass.h"

namespace gpuclean::rewrite::passes {
namespace {

class DensifyOfflinePass final : public OpPass {
 public:
  DensifyOfflinePass()
      : OpPass({"densify-offline", Exactness::kExact,
                "DENSIFY whose input is a sparse constant; the dense values are stored (file grows by the zeros)"},
               {tfl::BuiltinOperator_DENSIFY}) {}

 private:
  std::optional<std::string> Visit(OpSite& site) const override {
    if (site.op.inputs.empty()) return std::nullopt;
    const ir::Tensor& sparse = site.tensor(site.op.inputs[0]);
    if (!sparse.is_const() || !sparse.sparsity) return std::nullopt;
    const std::string name = sparse.name;
    const int output = site.op.outputs.at(0);
    const ir::Tensor out = site.tensor(output);
    npy::Array dense = EvaluateConstant(site.graph(), output);
    const int constant = site.edit.mutable_graph().AddConst(site.edit.prefix() + name, out.dtype, out.shape,
                                                            Bytes::Own(std::move(dense.data)));
    site.edit.Replace(site.node, {constant});
    return fmt::format("'{}' stored dense ({} values)", name, out.num_elements());
  }
};

}  // namespace

const Pass& DensifyOffline() {
  static const DensifyOfflinePass pass;
  return pass;
}

}  // namespace gpuclean::rewrite::passes
