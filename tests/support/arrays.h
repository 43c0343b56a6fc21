#pragma once
// Arrays for tests, one set for every test folder: given values,
// deterministic random values, and the values of an output. Shapes come as
// braced lists or as int32 (builder::Shape) or int64 (npy) vectors.
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpuclean/ir.h"
#include "gpuclean/npy.h"

namespace gpuclean::testing {

using ShapeList = std::initializer_list<int64_t>;

template <typename S = ShapeList>
int64_t CountOf(const S& shape) {
  int64_t n = 1;
  for (auto d : shape) n *= static_cast<int64_t>(d);
  return n;
}

// Throws when the values do not fill the shape (a test-data mistake).
template <typename T, typename S = ShapeList>
npy::Array MakeArray(ir::DType dtype, const S& shape, const std::vector<T>& values) {
  if (CountOf(shape) != static_cast<int64_t>(values.size()))
    throw std::invalid_argument("test data does not fit its shape: " + std::to_string(values.size()) + " values for " +
                                std::to_string(CountOf(shape)) + " elements");
  npy::Array a;
  a.dtype = dtype;
  a.shape.assign(shape.begin(), shape.end());
  a.data.resize(values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(a.data.data(), values.data(), a.data.size());
  return a;
}
template <typename S = ShapeList>
npy::Array F32(const S& shape, const std::vector<float>& values) {
  return MakeArray(tfl::TensorType_FLOAT32, shape, values);
}
template <typename S = ShapeList>
npy::Array I32(const S& shape, const std::vector<int32_t>& values) {
  return MakeArray(tfl::TensorType_INT32, shape, values);
}
template <typename S = ShapeList>
npy::Array U8(const S& shape, const std::vector<uint8_t>& values) {
  return MakeArray(tfl::TensorType_UINT8, shape, values);
}

// The elements of `a` as T (its dtype's C type).
template <typename T>
std::vector<T> ValuesOf(const npy::Array& a) {
  std::vector<T> v(static_cast<size_t>(a.num_elements()));
  if (!v.empty()) std::memcpy(v.data(), a.data.data(), v.size() * sizeof(T));
  return v;
}

// Uniform floats in [lo, hi), deterministic per seed.
inline std::vector<float> RandomValues(int64_t count, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::vector<float> v(static_cast<size_t>(count));
  for (float& x : v) x = lo + (hi - lo) * static_cast<float>(rng() >> 8) / 16777216.0f;
  return v;
}
template <typename S = ShapeList>
npy::Array RandomF32(const S& shape, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  return F32(shape, RandomValues(CountOf(shape), seed, lo, hi));
}
// Floats with |x| uniform in [lo, hi) and a random sign (divisors away from 0).
template <typename S = ShapeList>
npy::Array RandomSignedF32(const S& shape, uint32_t seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::vector<float> v(static_cast<size_t>(CountOf(shape)));
  for (float& x : v) {
    x = lo + (hi - lo) * static_cast<float>(rng() >> 8) / 16777216.0f;
    if (rng() & 1) x = -x;
  }
  return F32(shape, v);
}
// Uniform integers in [lo, hi], deterministic per seed.
template <typename S = ShapeList>
npy::Array RandomI32(const S& shape, uint32_t seed, int32_t lo, int32_t hi) {
  std::mt19937 rng(seed);
  std::vector<int32_t> v(static_cast<size_t>(CountOf(shape)));
  const uint64_t span = static_cast<uint64_t>(int64_t{hi} - lo) + 1;  // up to 2^32: no int32 overflow
  for (int32_t& x : v) x = static_cast<int32_t>(lo + static_cast<int64_t>(rng() % span));
  return I32(shape, v);
}
// Integer-valued floats in [lo, hi]: exact ties for comparisons and selects.
template <typename S = ShapeList>
npy::Array TiedF32(const S& shape, uint32_t seed, int lo, int hi) {
  std::mt19937 rng(seed);
  std::vector<float> v(static_cast<size_t>(CountOf(shape)));
  for (float& x : v) x = static_cast<float>(lo + static_cast<int>(rng() % static_cast<uint32_t>(hi - lo + 1)));
  return F32(shape, v);
}

}  // namespace gpuclean::testing
