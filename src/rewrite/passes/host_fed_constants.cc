// host-fed-constants (opt-in): large float constants read by compute ops
// (position tables, anchor grids) gave wrong numbers on the GPU in fp32 and
// fp16 alike, while the same values fed as a runtime input were right
// (RF-DETR-Seg). Each such constant becomes a graph input whose value the
// host feeds from a file beside the model. Same values, so exact. Opt-in
// because the model's interface grows.
#include <fmt/format.h>

#include <map>

#include "rewrite/graph_edit.h"
#include "rewrite/passes/passes.h"

namespace gpuclean::rewrite::passes {
namespace {

class HostFedConstantsPass final : public Pass {
 public:
  std::string_view id() const override { return "host-fed-constants"; }
  Exactness exactness() const override { return Exactness::kExact; }
  bool opt_in() const override { return true; }
  std::string_view contract() const override {
    return "dense float32 constants of >= host_fed_min_elements elements read outside weight slots; each becomes a "
           "graph input fed the same values from the host";
  }

  PassResult Apply(ir::Model& model, const PassOptions& options) const override {
    PassResult result;
    GraphEdit edit(model, std::string(id()));
    std::map<int, int> fed;  // constant -> the input that replaces it
    const size_t count = edit.graph().ops.size();
    for (size_t i = 0; i < count; ++i) {
      for (size_t k = 0; k < edit.graph().ops[i].inputs.size(); ++k) {
        const int c = edit.graph().ops[i].inputs[k];
        if (c < 0 || lint::IsWeightSlot(edit.graph().ops[i], k)) continue;
        const ir::Tensor& t = edit.graph().tensors[c];
        if (!t.is_const() || t.sparsity || !t.quant.empty() || t.dtype != tfl::TensorType_FLOAT32) continue;
        if (t.num_elements() < options.host_fed_min_elements) continue;
        auto it = fed.find(c);
        if (it == fed.end()) {
          const std::string name = t.name;
          const std::vector<int32_t> shape = t.shape;
          npy::Array value;
          value.dtype = t.dtype;
          value.shape.assign(shape.begin(), shape.end());
          value.data.assign(t.data->data(), t.data->data() + t.data->size());
          const int input = edit.Input(name, t.dtype, shape);
          result.host_inputs.push_back({edit.graph().tensors[input].name, std::move(value)});
          it = fed.emplace(c, input).first;
        }
        const ir::Op& op = edit.graph().ops[i];
        result.sites.push_back(
            {static_cast<int>(i), op.name(),
             fmt::format("input {} '{}' {} fed by the host as '{}'", k, edit.graph().tensors[c].name,
                         ir::FormatShape(edit.graph().tensors[c].shape), edit.graph().tensors[it->second].name)});
        edit.mutable_graph().ops[i].inputs[k] = it->second;
      }
    }
    // Commit() drops the baked copies, now unreferenced: the file must not keep carrying them.
    edit.Commit();
    return result;
  }
};

}  // namespace

const Pass& HostFedConstants() {
  static const HostFedConstantsPass pass;
  return pass;
}

}  // namespace gpuclean::rewrite::passes
