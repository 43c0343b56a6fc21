// The pass catalogue, read from its one declaration (src/lint/passes.def).
#include "gpuclean/lint.h"

namespace gpuclean::lint {

const std::vector<PassInfo>& PassCatalog() {
  static const std::vector<PassInfo> catalog = {
#define GPUCLEAN_PASS(ID, KIND, ACCESSOR, SUMMARY) {ID, PassKind::KIND, SUMMARY},
#include "lint/passes.def"
#undef GPUCLEAN_PASS
  };
  return catalog;
}

std::string_view PassKindName(PassKind kind) {
  switch (kind) {
    case PassKind::kAutomatic: return "automatic";
    case PassKind::kNumeric: return "numeric";
    case PassKind::kOptIn: return "opt-in";
    case PassKind::kSplit: return "split";
    case PassKind::kHost: return "host";
    case PassKind::kManual: return "manual";
  }
  return "?";
}

bool IsRewrite(PassKind kind) {
  return kind == PassKind::kAutomatic || kind == PassKind::kNumeric || kind == PassKind::kOptIn;
}

const PassInfo* FindPass(std::string_view id) {
  for (const PassInfo& pass : PassCatalog())
    if (id == pass.id) return &pass;
  return nullptr;
}

}  // namespace gpuclean::lint
