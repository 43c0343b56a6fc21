#pragma once
// Builder-made graphs run on LiteRT.js. Each OpCase builds one model; the
// shared test (litert_ops_test.cc) writes it, reads it back, runs it on
// LiteRT.js and checks the outputs have the shapes shape inference gave,
// and, where the case knows them, the values.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "gpuclean/builder.h"
#include "gpuclean/npy.h"
#include "support/conformance.h"

namespace gpuclean::testing {

using builder::GraphBuilder;
using builder::Shape;
using Arrays = std::vector<npy::Array>;

struct OpCase {
  std::string name;  // gtest-safe: letters, digits, underscores
  std::function<ir::Model()> build;
  // Range of the generated float inputs (some ops want positive values).
  float low = -2.0f;
  float high = 2.0f;
  // Explicit inputs in graph-input order; generated when not given.
  std::function<Arrays(const ir::Model&)> inputs;
  // Value checks on LiteRT's outputs, where they are easy to compute.
  std::function<void(const Arrays& inputs, const Arrays& outputs)> check;
};

// gtest prints parameters in test listings; the name is what identifies a case.
inline void PrintTo(const OpCase& c, std::ostream* os) { *os << c.name; }

std::vector<OpCase> ElementwiseCases();
std::vector<OpCase> ConvCases();
std::vector<OpCase> LayoutCases();
std::vector<OpCase> ReduceCases();
std::vector<OpCase> PatternCases();

// ---------------------------------------------------------------- helpers

inline ir::DType F32() { return tfl::TensorType_FLOAT32; }
inline ir::DType I32() { return tfl::TensorType_INT32; }

inline int64_t Elements(const Shape& shape) {
  int64_t n = 1;
  for (int32_t d : shape) n *= d;
  return n;
}

// Deterministic values in [low, high): a small LCG, so cases need no seeds.
inline std::vector<float> Ramp(int64_t count, uint32_t seed, float low = -2.0f, float high = 2.0f) {
  std::vector<float> values(count);
  uint32_t state = seed * 2654435761u + 12345u;
  for (auto& v : values) {
    state = state * 1664525u + 1013904223u;
    v = low + (high - low) * static_cast<float>(state >> 8) / 16777216.0f;
  }
  return values;
}

inline npy::Array FloatArray(const Shape& shape, const std::vector<float>& values) {
  npy::Array a;
  a.dtype = tfl::TensorType_FLOAT32;
  a.shape.assign(shape.begin(), shape.end());
  a.data.resize(values.size() * sizeof(float));
  std::memcpy(a.data.data(), values.data(), a.data.size());
  return a;
}

inline npy::Array IntArray(const Shape& shape, const std::vector<int32_t>& values) {
  npy::Array a;
  a.dtype = tfl::TensorType_INT32;
  a.shape.assign(shape.begin(), shape.end());
  a.data.resize(values.size() * sizeof(int32_t));
  std::memcpy(a.data.data(), values.data(), a.data.size());
  return a;
}

inline std::vector<float> Floats(const npy::Array& a) {
  EXPECT_EQ(a.dtype, tfl::TensorType_FLOAT32);
  return {a.as<float>(), a.as<float>() + a.num_elements()};
}

inline std::vector<int32_t> Ints(const npy::Array& a) {
  EXPECT_EQ(a.dtype, tfl::TensorType_INT32);
  return {a.as<int32_t>(), a.as<int32_t>() + a.num_elements()};
}

// Row-major offset of `index` in `shape`.
inline int64_t Offset(const Shape& shape, const std::vector<int32_t>& index) {
  int64_t offset = 0;
  for (size_t d = 0; d < shape.size(); ++d) offset = offset * shape[d] + index[d];
  return offset;
}

// Calls fn(index) for every index of `shape` in row-major order.
inline void ForEachIndex(const Shape& shape, const std::function<void(const std::vector<int32_t>&)>& fn) {
  if (Elements(shape) == 0) return;
  std::vector<int32_t> index(shape.size(), 0);
  while (true) {
    fn(index);
    int d = static_cast<int>(shape.size()) - 1;
    for (; d >= 0; --d) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

// Elementwise reference with numpy broadcasting of two inputs.
inline std::vector<float> Broadcast2(const npy::Array& a, const npy::Array& b, const Shape& out,
                                     const std::function<float(float, float)>& fn) {
  const Shape sa(a.shape.begin(), a.shape.end()), sb(b.shape.begin(), b.shape.end());
  auto pick = [&](const Shape& s, const std::vector<int32_t>& index) {
    std::vector<int32_t> i(s.size());
    for (size_t d = 0; d < s.size(); ++d) {
      const int32_t od = index[index.size() - s.size() + d];
      i[d] = s[d] == 1 ? 0 : od;
    }
    return Offset(s, i);
  };
  std::vector<float> result;
  ForEachIndex(out, [&](const std::vector<int32_t>& index) {
    result.push_back(fn(a.as<float>()[pick(sa, index)], b.as<float>()[pick(sb, index)]));
  });
  return result;
}

// A single-op graph over float inputs of the given shapes.
inline ir::Model OneOp(const std::vector<Shape>& inputs, const builder::OpMaker& make) {
  return builder::SingleOpGraph(inputs, make);
}

}  // namespace gpuclean::testing
