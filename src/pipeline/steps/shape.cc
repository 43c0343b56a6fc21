// Shape host steps: concatenation, reshape and tile (pure data movement).
#include <cstring>
#include <limits>

#include "gpuclean/host_steps.h"
#include "pipeline/steps/step_util.h"

namespace gpuclean::pipeline {
using steps::Fail;

npy::Array Concat(const std::vector<npy::Array>& parts, int axis) {
  if (parts.empty()) Fail("concat", "needs at least one input");
  const npy::Array& first = parts.front();
  const int rank = static_cast<int>(first.shape.size());
  axis = steps::NormaliseAxis("concat", axis, rank);
  std::vector<int64_t> shape = first.shape;
  shape[axis] = 0;
  for (size_t p = 0; p < parts.size(); ++p) {
    const npy::Array& a = parts[p];
    steps::RequireWellFormed("concat", a, "input");
    if (a.dtype != first.dtype)
      Fail("concat", "input {} is {}, input 0 is {}", p, ir::DTypeName(a.dtype), ir::DTypeName(first.dtype));
    if (static_cast<int>(a.shape.size()) != rank)
      Fail("concat", "input {} {} and input 0 {} differ in rank", p, steps::ShapeText(a.shape),
           steps::ShapeText(first.shape));
    for (int i = 0; i < rank; ++i)
      if (i != axis && a.shape[i] != first.shape[i])
        Fail("concat", "input {} {} and input 0 {} differ on axis {}", p, steps::ShapeText(a.shape),
             steps::ShapeText(first.shape), i);
    shape[axis] += a.shape[axis];
  }
  npy::Array out = steps::MakeArray(first.dtype, shape);
  const int64_t outer = steps::Product(shape, 0, axis);
  const size_t elem = ir::DTypeSize(first.dtype);
  uint8_t* o = out.data.data();
  for (int64_t i = 0; i < outer; ++i)
    for (const npy::Array& a : parts) {
      const size_t chunk = static_cast<size_t>(steps::Product(a.shape, axis, rank)) * elem;
      std::memcpy(o, a.data.data() + i * chunk, chunk);
      o += chunk;
    }
  return out;
}

npy::Array Reshape(const npy::Array& x, const std::vector<int64_t>& shape) {
  steps::RequireWellFormed("reshape", x, "input");
  std::vector<int64_t> out_shape = shape;
  int inferred = -1;
  int64_t known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (inferred >= 0) Fail("reshape", "shape {} has more than one -1", steps::ShapeText(shape));
      inferred = static_cast<int>(i);
    } else if (shape[i] < 0) {
      Fail("reshape", "shape {} has a negative dimension", steps::ShapeText(shape));
    } else {
      known = shape[i] == 0 ? 0 : (known > INT64_MAX / shape[i] ? INT64_MAX : known * shape[i]);
    }
  }
  const int64_t n = x.num_elements();
  if (inferred >= 0) {
    if (known == 0 || n % known != 0)
      Fail("reshape", "cannot reshape {} ({} elements) to {}", steps::ShapeText(x.shape), n, steps::ShapeText(shape));
    out_shape[inferred] = n / known;
  } else if (known != n) {
    Fail("reshape", "cannot reshape {} ({} elements) to {}", steps::ShapeText(x.shape), n, steps::ShapeText(shape));
  }
  npy::Array out = x;
  out.shape = out_shape;
  return out;
}

npy::Array Tile(const npy::Array& x, const std::vector<int64_t>& multiples) {
  steps::RequireWellFormed("tile", x, "input");
  const size_t rank = x.shape.size();
  if (multiples.size() != rank) Fail("tile", "{} multiples for an input of rank {}", multiples.size(), rank);
  std::vector<int64_t> shape(rank);
  for (size_t i = 0; i < rank; ++i) {
    if (multiples[i] < 0) Fail("tile", "multiple {} on axis {} is negative", multiples[i], i);
    if (multiples[i] != 0 && x.shape[i] > std::numeric_limits<int64_t>::max() / multiples[i])
      Fail("tile", "multiples {} overflow the shape {}", steps::ShapeText(multiples), steps::ShapeText(x.shape));
    shape[i] = x.shape[i] * multiples[i];
  }
  npy::Array out = steps::MakeArray(x.dtype, shape);
  const size_t elem = ir::DTypeSize(x.dtype);
  const int64_t n = out.num_elements();
  // Output element -> input element, axis by axis from the innermost.
  for (int64_t e = 0; e < n; ++e) {
    int64_t rest = e, from = 0, stride = 1;
    for (size_t i = rank; i-- > 0;) {
      const int64_t pos = rest % shape[i];
      rest /= shape[i];
      from += (pos % x.shape[i]) * stride;
      stride *= x.shape[i];
    }
    std::memcpy(out.data.data() + e * elem, x.data.data() + from * elem, elem);
  }
  return out;
}

}  // namespace gpuclean::pipeline
