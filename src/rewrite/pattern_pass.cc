#include "rewrite/pattern_pass.h"

#include <algorithm>

namespace gpuclean::rewrite {

int OpSite::Shared(const std::string& key, const std::function<int()>& make) {
  if (auto it = shared.find(key); it != shared.end()) return it->second;
  const int tensor = make();
  shared.emplace(key, tensor);
  return tensor;
}

int OpSite::SharedHostScalar(const std::string& name, float value) {
  // A key no Shared() caller spells: host inputs have their own namespace.
  return Shared("host input\n" + name, [&] {
    auto [input, host] = edit.ScalarHostInput(name, value);
    host_inputs.push_back(std::move(host));
    return input;
  });
}

PassResult OpPass::Apply(ir::Model& model, const PassOptions& options) const {
  PassResult result;
  GraphEdit edit(model, std::string(id()));
  std::map<std::string, int> shared;
  const size_t count = edit.graph().ops.size();
  for (size_t i = 0; i < count; ++i) {
    const tfl::BuiltinOperator code = edit.graph().ops[i].code;
    if (looks_at_ ? !looks_at_(code) : std::find(codes_.begin(), codes_.end(), code) == codes_.end()) continue;
    const ir::Op op = edit.graph().ops[i];
    OpSite site{edit, options, static_cast<int>(i), op, result.skipped, result.host_inputs, shared};
    if (std::optional<std::string> what = Visit(site)) result.sites.push_back({site.node, op.name(), std::move(*what)});
  }
  edit.Commit();
  return result;
}

}  // namespace gpuclean::rewrite
