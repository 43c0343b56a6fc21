// densify-offline: DENSIFY of a sparse constant -> the dense constant stored
// in the file. The GPU delegates do not take DENSIFY (or a sparse tensor);
// the values are the same, only the storage changes, so the pass is exact.
#include <fmt/format.h>

#include "gpuclean/bytes.h"
#include "rewrite/graph_edit.h"
#include "rewrite/passes/passes.h"

namespace gpuclean::rewrite::passes {
namespace {

class DensifyOfflinePass final : public Pass {
 public:
  std::string_view id() const override { return "densify-offline"; }
  Exactness exactness() const override { return Exactness::kExact; }
  std::string_view contract() const override {
    return "DENSIFY whose input is a sparse constant; the dense values are stored (file grows by the zeros)";
  }

  PassResult Apply(ir::Model& model, const PassOptions&) const override {
    PassResult result;
    GraphEdit edit(model, std::string(id()));
    const size_t count = edit.graph().ops.size();
    for (size_t i = 0; i < count; ++i) {
      const ir::Op& op = edit.graph().ops[i];
      if (op.code != tfl::BuiltinOperator_DENSIFY || op.inputs.empty()) continue;
      const ir::Tensor& sparse = edit.graph().tensors.at(op.inputs[0]);
      if (!sparse.is_const() || !sparse.sparsity) continue;
      const std::string name = sparse.name;
      const int output = op.outputs.at(0);
      const ir::Tensor out = edit.graph().tensors[output];
      npy::Array dense = EvaluateConstant(edit.graph(), output);
      const int constant =
          edit.mutable_graph().AddConst(edit.prefix() + name, out.dtype, out.shape, Bytes::Own(std::move(dense.data)));
      result.sites.push_back(
          {static_cast<int>(i), "DENSIFY", fmt::format("'{}' stored dense ({} values)", name, out.num_elements())});
      edit.Replace(static_cast<int>(i), {constant});
    }
    edit.Commit();
    return result;
  }
};

}  // namespace

const Pass& DensifyOffline() {
  static const DensifyOfflinePass pass;
  return pass;
}

}  // namespace gpuclean::rewrite::passes
