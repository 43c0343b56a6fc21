#include "rewrite/pattern_pass.h"

#include <algorithm>

namespace gpuclean::rewrite {

PassResult OpPass::Apply(ir::Model& model, const PassOptions& options) const {
  PassResult result;
  GraphEdit edit(model, std::string(id()));
  const size_t count = edit.graph().ops.size();
  for (size_t i = 0; i < count; ++i) {
    const tfl::BuiltinOperator code = edit.graph().ops[i].code;
    if (looks_at_ ? !looks_at_(code) : std::find(codes_.begin(), codes_.end(), code) == codes_.end()) continue;
    const ir::Op op = edit.graph().ops[i];
    OpSite site{edit, options, static_cast<int>(i), op, result.skipped};
    if (std::optional<std::string> what = Visit(site)) result.sites.push_back({site.node, op.name(), std::move(*what)});
  }
  edit.Commit();
  return result;
}

}  // namespace gpuclean::rewrite
