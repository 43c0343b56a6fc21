#include "gpuclean/rewrite.h"
#include "rewrite/passes/passes.h"

namespace gpuclean::rewrite {

std::string_view ExactnessName(Exactness exactness) { return exactness == Exactness::kExact ? "exact" : "approx"; }

// Order matters where passes feed each other: weights are made dense and
// constants folded before passes that read constant values; structural
// splits (SPLIT, PACK) run before the passes that match their results.
const std::vector<const Pass*>& Registry() {
  static const std::vector<const Pass*> registry = {
      &passes::DensifyOffline(),
  };
  return registry;
}

const Pass* FindPass(std::string_view id) {
  for (const Pass* pass : Registry())
    if (pass->id() == id) return pass;
  return nullptr;
}

}  // namespace gpuclean::rewrite
