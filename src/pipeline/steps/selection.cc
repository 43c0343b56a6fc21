// Selection host steps: top-K with indices, GATHER and GatherElements. Every
// index is checked before it is used: a proposal index computed on a GPU is
// data, and data can be wrong.
#include <algorithm>
#include <cstring>
#include <numeric>

#include "gpuclean/host_steps.h"
#include "pipeline/steps/step_util.h"

namespace gpuclean::pipeline {
using steps::Fail;

namespace {

template <typename T>
void TopKRows(const npy::Array& x, int64_t k, npy::Array& values, npy::Array& indices) {
  const int64_t depth = x.shape.back();
  const int64_t rows = depth == 0 ? 0 : x.num_elements() / depth;
  std::vector<int32_t> order(depth);
  for (int64_t r = 0; r < rows; ++r) {
    const T* row = x.as<T>() + r * depth;
    std::iota(order.begin(), order.end(), 0);
    // Descending, equal values in index order: what TOPK_V2 returns.
    std::partial_sort(order.begin(), order.begin() + k, order.end(),
                      [row](int32_t a, int32_t b) { return row[a] > row[b] || (row[a] == row[b] && a < b); });
    for (int64_t i = 0; i < k; ++i) {
      values.as<T>()[r * k + i] = row[order[i]];
      indices.as<int32_t>()[r * k + i] = order[i];
    }
  }
}

}  // namespace

TopKResult TopK(const npy::Array& x, int64_t k) {
  steps::RequireWellFormed("topk", x, "input");
  steps::RequireDtype("topk", x, "input", {tfl::TensorType_FLOAT32, tfl::TensorType_INT32});
  if (x.shape.empty()) Fail("topk", "input is a scalar; it needs a last axis to select from");
  const int64_t depth = x.shape.back();
  if (k < 0 || k > depth)
    Fail("topk", "k = {} is outside [0, {}] (the last axis of {})", k, depth, steps::ShapeText(x.shape));
  if (depth > INT32_MAX) Fail("topk", "the last axis {} is longer than int32 indices reach", depth);
  std::vector<int64_t> shape = x.shape;
  shape.back() = k;
  TopKResult result{steps::MakeArray(x.dtype, shape), steps::MakeArray(tfl::TensorType_INT32, shape)};
  if (x.dtype == tfl::TensorType_FLOAT32)
    TopKRows<float>(x, k, result.values, result.indices);
  else
    TopKRows<int32_t>(x, k, result.values, result.indices);
  return result;
}

npy::Array Gather(const npy::Array& params, const npy::Array& indices, int axis, int batch_dims) {
  steps::RequireWellFormed("gather", params, "params");
  steps::RequireWellFormed("gather", indices, "indices");
  const int rank = static_cast<int>(params.shape.size());
  axis = steps::NormaliseAxis("gather", axis, rank);
  const int index_rank = static_cast<int>(indices.shape.size());
  if (batch_dims < 0) batch_dims += index_rank;
  if (batch_dims < 0 || batch_dims > axis || batch_dims > index_rank)
    Fail("gather", "batch_dims {} must lie in [0, min(axis {}, indices rank {})]", batch_dims, axis, index_rank);
  for (int i = 0; i < batch_dims; ++i)
    if (params.shape[i] != indices.shape[i])
      Fail("gather", "batch dimension {} is {} in params {} but {} in indices {}", i, params.shape[i],
           steps::ShapeText(params.shape), indices.shape[i], steps::ShapeText(indices.shape));
  const std::vector<int64_t> index = steps::ReadIndices("gather", indices);
  const int64_t limit = params.shape[axis];
  for (size_t i = 0; i < index.size(); ++i)
    if (index[i] < 0 || index[i] >= limit)
      Fail("gather", "index {} (element {}) is outside [0, {}) along axis {} of {}", index[i], i, limit, axis,
           steps::ShapeText(params.shape));

  std::vector<int64_t> shape(params.shape.begin(), params.shape.begin() + axis);
  shape.insert(shape.end(), indices.shape.begin() + batch_dims, indices.shape.end());
  shape.insert(shape.end(), params.shape.begin() + axis + 1, params.shape.end());
  npy::Array out = steps::MakeArray(params.dtype, shape);

  const size_t elem = ir::DTypeSize(params.dtype);
  const int64_t batches = steps::Product(params.shape, 0, batch_dims);
  const int64_t outer = steps::Product(params.shape, batch_dims, axis);  // per batch
  const int64_t inner = steps::Product(params.shape, axis + 1, rank) * static_cast<int64_t>(elem);
  const int64_t per_batch = steps::Product(indices.shape, batch_dims, index_rank);
  uint8_t* o = out.data.data();
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t i = 0; i < outer; ++i) {
      const uint8_t* src = params.data.data() + ((b * outer + i) * limit) * inner;
      for (int64_t j = 0; j < per_batch; ++j, o += inner) std::memcpy(o, src + index[b * per_batch + j] * inner, inner);
    }
  return out;
}

npy::Array GatherNd(const npy::Array& params, const npy::Array& indices) {
  steps::RequireWellFormed("gather_nd", params, "params");
  steps::RequireWellFormed("gather_nd", indices, "indices");
  if (indices.shape.empty()) Fail("gather_nd", "indices are a scalar; the last axis holds the coordinates");
  const int64_t depth = indices.shape.back();
  const int rank = static_cast<int>(params.shape.size());
  if (depth > rank) Fail("gather_nd", "index depth {} exceeds the params rank {}", depth, rank);
  const std::vector<int64_t> index = steps::ReadIndices("gather_nd", indices);
  const int64_t count = depth == 0 ? steps::Product(indices.shape, 0, indices.shape.size() - 1)
                                   : static_cast<int64_t>(index.size()) / depth;
  std::vector<int64_t> shape(indices.shape.begin(), indices.shape.end() - 1);
  shape.insert(shape.end(), params.shape.begin() + depth, params.shape.end());
  npy::Array out = steps::MakeArray(params.dtype, shape);
  std::vector<int64_t> stride(rank, 1);
  for (int i = rank - 1; i > 0; --i) stride[i - 1] = stride[i] * params.shape[i];
  const size_t row = static_cast<size_t>(steps::Product(params.shape, depth, rank)) * ir::DTypeSize(params.dtype);
  for (int64_t i = 0; i < count; ++i) {
    int64_t offset = 0;
    for (int64_t d = 0; d < depth; ++d) {
      const int64_t v = index[i * depth + d];
      if (v < 0 || v >= params.shape[d])
        Fail("gather_nd", "index {} of axis {} (row {}) is outside [0, {})", v, d, i, params.shape[d]);
      offset += v * stride[d];
    }
    std::memcpy(out.data.data() + i * row, params.data.data() + offset * ir::DTypeSize(params.dtype), row);
  }
  return out;
}

npy::Array GatherElements(const npy::Array& x, const npy::Array& indices, int axis) {
  steps::RequireWellFormed("gather_elements", x, "input");
  steps::RequireWellFormed("gather_elements", indices, "indices");
  const int rank = static_cast<int>(x.shape.size());
  axis = steps::NormaliseAxis("gather_elements", axis, rank);
  if (static_cast<int>(indices.shape.size()) != rank)
    Fail("gather_elements", "indices {} must have the rank of the input {}", steps::ShapeText(indices.shape),
         steps::ShapeText(x.shape));
  for (int i = 0; i < rank; ++i)
    if (i != axis && indices.shape[i] > x.shape[i])
      Fail("gather_elements", "indices {} exceed the input {} on axis {}", steps::ShapeText(indices.shape),
           steps::ShapeText(x.shape), i);
  std::vector<int64_t> index = steps::ReadIndices("gather_elements", indices);
  const int64_t limit = x.shape[axis];
  for (size_t i = 0; i < index.size(); ++i) {
    if (index[i] < -limit || index[i] >= limit)
      Fail("gather_elements", "index {} (element {}) is outside [{}, {}) along axis {}", index[i], i, -limit, limit,
           axis);
    if (index[i] < 0) index[i] += limit;
  }
  npy::Array out = steps::MakeArray(x.dtype, indices.shape);
  const size_t elem = ir::DTypeSize(x.dtype);
  // Strides of the input; the output walks the indices' shape.
  std::vector<int64_t> stride(rank, 1);
  for (int i = rank - 1; i > 0; --i) stride[i - 1] = stride[i] * x.shape[i];
  std::vector<int64_t> pos(rank, 0);
  for (size_t k = 0; k < index.size(); ++k) {
    int64_t src = 0;
    for (int i = 0; i < rank; ++i) src += (i == axis ? index[k] : pos[i]) * stride[i];
    std::memcpy(out.data.data() + k * elem, x.data.data() + src * elem, elem);
    for (int i = rank; i-- > 0;) {
      if (++pos[i] < indices.shape[i]) break;
      pos[i] = 0;
    }
  }
  return out;
}

}  // namespace gpuclean::pipeline
