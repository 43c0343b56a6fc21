#include "gpuclean/error.h"
#include "gpuclean/lint.h"
#include "gpuclean/rewrite.h"
#include "rewrite/passes/passes.h"

namespace gpuclean::rewrite {

std::string_view ExactnessName(Exactness exactness) { return exactness == Exactness::kExact ? "exact" : "approx"; }

namespace passes {
// The catalogue's entries that are not rewrites.
const Pass& NotARewrite() { throw Error(ErrorKind::kInternal, "NotARewrite is not a pass"); }
}  // namespace passes

// The rewrites of the pass catalogue (src/lint/passes.def), in its order.
const std::vector<const Pass*>& Registry() {
  static const std::vector<const Pass*> registry = [] {
    std::vector<const Pass*> passes;
    const auto add = [&](lint::PassKind kind, const Pass& (*accessor)()) {
      if (lint::IsRewrite(kind)) passes.push_back(&accessor());
    };
#define GPUCLEAN_PASS(ID, KIND, ACCESSOR, SUMMARY) add(lint::PassKind::KIND, &passes::ACCESSOR);
#include "lint/passes.def"
#undef GPUCLEAN_PASS
    return passes;
  }();
  return registry;
}

const Pass* FindPass(std::string_view id) {
  for (const Pass* pass : Registry())
    if (pass->id() == id) return pass;
  return nullptr;
}

}  // namespace gpuclean::rewrite
