#pragma once
// Helpers of the shape-family kernel tests: bool tensors made inside the
// graph and turned back to float32, as LiteRT.js feeds and returns no bools.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gpuclean/builder.h"
#include "gpuclean/error.h"
#include "gpuclean/exec.h"
#include "gpuclean/npy.h"
#include "support/arrays.h"
#include "support/conformance.h"

namespace gpuclean::testing {

namespace tfl = ::gpuclean::tfl;
using builder::GraphBuilder;
using Shape = std::vector<int32_t>;

// A bool tensor built inside the graph (LiteRT.js cannot feed bools): x > 0.
inline int PositiveMask(GraphBuilder& b, int x) {
  return b.Greater(x, b.ConstF32("zero_" + std::to_string(x), {}, {0.0f}));
}
// A bool tensor as float32 for the output (LiteRT.js cannot return bools).
inline int AsFloat(GraphBuilder& b, int x) { return b.Cast(x, tfl::TensorType_FLOAT32); }

}  // namespace gpuclean::testing
