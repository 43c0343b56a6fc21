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

inline int64_t CountOf(const Shape& shape) {
  int64_t n = 1;
  for (int32_t d : shape) n *= d;
  return n;
}

template <typename T>
npy::Array MakeArray(ir::DType dtype, const Shape& shape, const std::vector<T>& values) {
  npy::Array a;
  a.dtype = dtype;
  a.shape.assign(shape.begin(), shape.end());
  EXPECT_EQ(static_cast<int64_t>(values.size()), CountOf(shape)) << "test data does not fit its shape";
  a.data.resize(values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(a.data.data(), values.data(), a.data.size());
  return a;
}

// Uniform floats in [lo, hi), deterministic per seed.
inline npy::Array RandomF32(const Shape& shape, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::vector<float> v(static_cast<size_t>(CountOf(shape)));
  for (float& x : v) x = lo + (hi - lo) * static_cast<float>(rng() >> 8) / 16777216.0f;
  return MakeArray(tfl::TensorType_FLOAT32, shape, v);
}

// Uniform integers in [lo, hi], deterministic per seed.
inline npy::Array RandomI32(const Shape& shape, uint32_t seed, int32_t lo, int32_t hi) {
  std::mt19937 rng(seed);
  std::vector<int32_t> v(static_cast<size_t>(CountOf(shape)));
  for (int32_t& x : v) x = lo + static_cast<int32_t>(rng() % static_cast<uint32_t>(hi - lo + 1));
  return MakeArray(tfl::TensorType_INT32, shape, v);
}

// Small integer-valued floats in [lo, hi]: many exact ties.
inline npy::Array TiedF32(const Shape& shape, uint32_t seed, int lo, int hi) {
  std::mt19937 rng(seed);
  std::vector<float> v(static_cast<size_t>(CountOf(shape)));
  for (float& x : v) x = static_cast<float>(lo + static_cast<int>(rng() % static_cast<uint32_t>(hi - lo + 1)));
  return MakeArray(tfl::TensorType_FLOAT32, shape, v);
}

// A bool tensor built inside the graph (LiteRT.js cannot feed bools): x > 0.
inline int PositiveMask(GraphBuilder& b, int x) {
  return b.Greater(x, b.ConstF32("zero_" + std::to_string(x), {}, {0.0f}));
}
// A bool tensor as float32 for the output (LiteRT.js cannot return bools).
inline int AsFloat(GraphBuilder& b, int x) { return b.Cast(x, tfl::TensorType_FLOAT32); }

template <typename T>
std::vector<T> ValuesOf(const npy::Array& a) {
  std::vector<T> v(static_cast<size_t>(a.num_elements()));
  if (!v.empty()) std::memcpy(v.data(), a.data.data(), v.size() * sizeof(T));
  return v;
}

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
