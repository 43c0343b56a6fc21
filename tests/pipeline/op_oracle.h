#pragma once
// The oracle every host-step test checks against: the graph op the step
// replaces, built into a one-op model and run on gpuclean's interpreter
// (whose kernels are themselves checked against LiteRT.js).
#include <cmath>
#include <functional>
#include <memory>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "gpuclean/builder.h"
#include "gpuclean/exec.h"

namespace gpuclean::testing {

// Builds a graph with one input per array in `inputs` (same dtype and
// shape), lets `body` add ops and mark outputs, and runs it.
inline std::vector<npy::Array> RunGraphOp(
    const std::vector<npy::Array>& inputs,
    const std::function<void(builder::GraphBuilder&, const std::vector<int>&)>& body) {
  builder::GraphBuilder b;
  std::vector<int> ids;
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::vector<int32_t> shape(inputs[i].shape.begin(), inputs[i].shape.end());
    ids.push_back(b.Input("in" + std::to_string(i), inputs[i].dtype, shape));
  }
  body(b, ids);
  auto model = std::make_shared<const ir::Model>(b.Finish());
  exec::Interpreter interpreter(model);
  for (size_t i = 0; i < inputs.size(); ++i) interpreter.SetInput(static_cast<int>(i), inputs[i]);
  interpreter.Invoke();
  std::vector<npy::Array> out;
  for (int i = 0; i < interpreter.num_outputs(); ++i) out.push_back(interpreter.Output(i));
  return out;
}

inline npy::Array RandomF32(std::vector<int64_t> shape, uint32_t seed, float lo = -2.0f, float hi = 2.0f) {
  npy::Array a;
  a.shape = std::move(shape);
  a.data.resize(a.num_elements() * sizeof(float));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  for (int64_t i = 0; i < a.num_elements(); ++i) a.as<float>()[i] = dist(rng);
  return a;
}

// Same dtype and shape; float elements within `tolerance` (absolute, or
// relative to the magnitude when larger), other dtypes byte-equal.
inline void ExpectSameArray(const npy::Array& expected, const npy::Array& got, float tolerance = 0) {
  ASSERT_EQ(expected.dtype, got.dtype);
  ASSERT_EQ(expected.shape, got.shape);
  if (expected.dtype != tfl::TensorType_FLOAT32 || tolerance == 0) {
    if (expected.dtype == tfl::TensorType_FLOAT32) {
      for (int64_t i = 0; i < expected.num_elements(); ++i)
        ASSERT_EQ(expected.as<float>()[i], got.as<float>()[i]) << "element " << i;
    }
    ASSERT_EQ(expected.data, got.data);
    return;
  }
  for (int64_t i = 0; i < expected.num_elements(); ++i) {
    const float e = expected.as<float>()[i], g = got.as<float>()[i];
    if (e == g || (std::isnan(e) && std::isnan(g))) continue;  // equal infinities too
    const float bound = tolerance * std::max(1.0f, std::fabs(e));
    ASSERT_NEAR(e, g, bound) << "element " << i;
  }
}

}  // namespace gpuclean::testing
