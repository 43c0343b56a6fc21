#pragma once
// One accessor per rewrite pass, declared from the pass catalogue
// (src/lint/passes.def); each is defined in passes/<id>.cc.
#include "gpuclean/rewrite.h"

namespace gpuclean::rewrite::passes {

#define GPUCLEAN_PASS(ID, KIND, ACCESSOR, SUMMARY) const Pass& ACCESSOR();
#include "lint/passes.def"
#undef GPUCLEAN_PASS

}  // namespace gpuclean::rewrite::passes
