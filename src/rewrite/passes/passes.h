#pragma once
// One accessor per pass; each is defined in passes/<id>.cc. registry.cc
// lists them in the order Fix() applies them.
#include "gpuclean/rewrite.h"

namespace gpuclean::rewrite::passes {

const Pass& DensifyOffline();

}  // namespace gpuclean::rewrite::passes
