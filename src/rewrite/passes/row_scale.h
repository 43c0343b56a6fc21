#pragma once
// The per-row scale safe-layernorm-v2 and rmsnorm-scale-first share
// (defined in safe_layernorm_v2.cc).
#include <string>
#include <vector>

#include "rewrite/graph_edit.h"

namespace gpuclean::rewrite::passes {

// Appends ops computing, per row of `x` over `axes` (keep_dims shape), the
// smallest power of two S >= max(1, amax|x| / 8), capped at 2^15. Returns S.
// `tag` keeps the new constants' names unique per site.
int PowerOfTwoRowScale(GraphEdit& edit, int x, const std::vector<int32_t>& axes, const std::string& tag);

}  // namespace gpuclean::rewrite::passes
