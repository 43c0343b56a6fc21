#pragma once
// Helpers of the shape-family kernel tests: deterministic input arrays, and
// expectations for ops LiteRT.js cannot check (hand-computed values) or for
// our own multi-threaded runs.
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

// Our outputs with several threads are bit-identical to one thread.
inline void ExpectThreadsAgree(const ir::Model& model, const std::vector<npy::Array>& inputs, int threads = 3) {
  const std::vector<npy::Array> one = RunOurs(model, inputs, {.threads = 1});
  const std::vector<npy::Array> many = RunOurs(model, inputs, {.threads = threads});
  ASSERT_EQ(one.size(), many.size());
  for (size_t i = 0; i < one.size(); ++i) {
    EXPECT_EQ(one[i].shape, many[i].shape) << "output " << i;
    EXPECT_TRUE(one[i].data == many[i].data) << "output " << i << " differs with " << threads << " threads";
  }
}

// The interpreter refuses the model at prepare with Error(kUnsupported).
inline void ExpectUnsupported(const ir::Model& model) {
  try {
    exec::Interpreter interpreter(std::make_shared<const ir::Model>(model));
    ADD_FAILURE() << "the interpreter accepted the model";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported) << e.what();
  }
}

}  // namespace gpuclean::testing
