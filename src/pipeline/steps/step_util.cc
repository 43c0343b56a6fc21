#include "pipeline/steps/step_util.h"

#include <limits>

#include <fmt/ranges.h>

#include "gpuclean/limits.h"

namespace gpuclean::pipeline::steps {

std::string ShapeText(const std::vector<int64_t>& shape) { return fmt::format("[{}]", fmt::join(shape, ",")); }

int64_t Product(const std::vector<int64_t>& dims, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end && i < dims.size(); ++i) n *= dims[i];
  return n;
}

npy::Array MakeArray(ir::DType dtype, std::vector<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) ThrowBadInput(fmt::format("host step output shape {} has a negative dimension", ShapeText(shape)));
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d / 8)
      ThrowBadInput(fmt::format("host step output shape {} has too many elements", ShapeText(shape)));
    n *= d;
  }
  CheckMemory(static_cast<uint64_t>(n) * ir::DTypeSize(dtype), fmt::format("host step output {}", ShapeText(shape)));
  npy::Array a;
  a.dtype = dtype;
  a.shape = std::move(shape);
  a.data.assign(static_cast<size_t>(n) * ir::DTypeSize(dtype), 0);
  return a;
}

void RequireDtype(std::string_view step, const npy::Array& x, const char* what, std::initializer_list<ir::DType> ok) {
  for (ir::DType d : ok)
    if (x.dtype == d) return;
  std::vector<std::string_view> names;
  for (ir::DType d : ok) names.push_back(ir::DTypeName(d));
  Fail(step, "{} is {}, expected {}", what, ir::DTypeName(x.dtype), fmt::join(names, " or "));
}

void RequireFloat(std::string_view step, const npy::Array& x, const char* what) {
  RequireDtype(step, x, what, {tfl::TensorType_FLOAT32});
}

void RequireWellFormed(std::string_view step, const npy::Array& x, const char* what) {
  int64_t n = 1;
  for (int64_t d : x.shape) {
    if (d < 0) Fail(step, "{} has a negative dimension in {}", what, ShapeText(x.shape));
    n = d == 0 ? 0 : n * d;
  }
  if (static_cast<uint64_t>(n) * ir::DTypeSize(x.dtype) != x.data.size())
    Fail(step, "{} {} holds {} bytes, not {} elements of {}", what, ShapeText(x.shape), x.data.size(), n,
         ir::DTypeName(x.dtype));
}

int NormaliseAxis(std::string_view step, int axis, int rank) {
  if (axis < -rank || axis >= rank) Fail(step, "axis {} is outside [{}, {})", axis, -rank, rank);
  return axis < 0 ? axis + rank : axis;
}

std::vector<int64_t> BroadcastShape(std::string_view step, const std::vector<int64_t>& a,
                                    const std::vector<int64_t>& b) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) Fail(step, "shapes {} and {} do not broadcast", ShapeText(a), ShapeText(b));
    out[i] = da == 1 ? db : da;
  }
  return out;
}

std::vector<int64_t> BroadcastIndex(const std::vector<int64_t>& shape, const std::vector<int64_t>& out) {
  const size_t rank = out.size(), offset = rank - shape.size();
  // Stride of each output axis in the operand (0 where it broadcasts).
  std::vector<int64_t> stride(rank, 0);
  int64_t s = 1;
  for (size_t i = rank; i-- > offset;) {
    const int64_t d = shape[i - offset];
    stride[i] = d == 1 ? 0 : s;
    s *= d;
  }
  const int64_t total = Product(out, 0, rank);
  std::vector<int64_t> index(total);
  std::vector<int64_t> pos(rank, 0);
  int64_t flat = 0;
  for (int64_t k = 0; k < total; ++k) {
    index[k] = flat;
    for (size_t i = rank; i-- > 0;) {
      ++pos[i];
      flat += stride[i];
      if (pos[i] < out[i]) break;
      flat -= stride[i] * pos[i];
      pos[i] = 0;
    }
  }
  return index;
}

std::vector<int64_t> ReadIndices(std::string_view step, const npy::Array& indices) {
  RequireDtype(step, indices, "indices", {tfl::TensorType_INT32, tfl::TensorType_INT64});
  const int64_t n = indices.num_elements();
  std::vector<int64_t> out(n);
  for (int64_t i = 0; i < n; ++i)
    out[i] = indices.dtype == tfl::TensorType_INT32 ? indices.as<int32_t>()[i] : indices.as<int64_t>()[i];
  return out;
}

}  // namespace gpuclean::pipeline::steps
