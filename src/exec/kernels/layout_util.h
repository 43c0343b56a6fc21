#pragma once
// Helpers of the layout family (data movement, gathers, weight decoding;
// ir/shapes_layout.cc holds their shape rules): reading small integer
// tensors (axes, permutations, paddings), dtype policies, and one strided
// byte copy that TRANSPOSE, SLICE, STRIDED_SLICE, TILE, BROADCAST_TO, PAD,
// CONCATENATION, SPLIT, PACK and UNPACK are all expressed with. Naming and
// options are common.h's; reductions are reduce_util.h's.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "exec/kernel.h"
#include "exec/kernels/common.h"
#include "gpuclean/shapes.h"

namespace gpuclean::exec::kernels {

// ------------------------------------------------------------------ dtype policies

inline bool IsIndexDtype(ir::DType d) { return d == tfl::TensorType_INT32 || d == tfl::TensorType_INT64; }

// Dtypes a pure data-movement op may carry: it copies bytes, so any fixed-size
// type works, except quantized integers (LiteRT would requantize where scales
// differ; gpuclean runs float graphs).
inline bool IsMovableTensor(const ir::Tensor& t) {
  switch (t.dtype) {
    case tfl::TensorType_FLOAT32:
    case tfl::TensorType_FLOAT16:
    case tfl::TensorType_FLOAT64:
    case tfl::TensorType_INT32:
    case tfl::TensorType_INT64:
    case tfl::TensorType_BOOL:
    case tfl::TensorType_UINT32:
    case tfl::TensorType_UINT64:
    case tfl::TensorType_UINT16: return true;
    case tfl::TensorType_INT8:
    case tfl::TensorType_UINT8:
    case tfl::TensorType_INT16: return t.quant.scale.empty();
    default: return false;
  }
}

// Checks that the listed inputs (negative: all outputs too) carry movable
// dtypes and that they all agree with input `data_inputs[0]`.
inline void RequireMovable(const ir::Subgraph& graph, const ir::Op& op, std::initializer_list<int> data_inputs,
                           bool check_outputs = true) {
  const ir::Tensor* first = nullptr;
  auto check = [&](const ir::Tensor* t) {
    if (!t) return;
    if (!IsMovableTensor(*t)) ThrowUnsupportedDtype(graph, op, t->dtype);
    if (!first) first = t;
    if (t->dtype != first->dtype)
      ThrowOpUnsupported(graph, op, "data tensors mix dtypes {} and {}", ir::DTypeName(first->dtype),
                         ir::DTypeName(t->dtype));
  };
  for (int i : data_inputs) {
    if (i < 0) {
      for (int k = 0; k < static_cast<int>(op.inputs.size()); ++k) check(IrInput(graph, op, k));
    } else {
      check(IrInput(graph, op, i));
    }
  }
  if (check_outputs)
    for (int k = 0; k < static_cast<int>(op.outputs.size()); ++k) check(IrOutput(graph, op, k));
}

// Input `i`, when present, is int32 or int64 (an axis, shape, permutation...).
inline void RequireIndexInput(const ir::Subgraph& graph, const ir::Op& op, int i, std::string_view role) {
  const ir::Tensor* t = IrInput(graph, op, i);
  if (!t) return;
  if (!IsIndexDtype(t->dtype))
    ThrowOpUnsupported(graph, op, "{} (input {}) must be int32 or int64, got {}", role, i, ir::DTypeName(t->dtype));
}

inline void RequireInputDtype(const ir::Subgraph& graph, const ir::Op& op, int i,
                              std::initializer_list<ir::DType> dtypes) {
  const ir::Tensor* t = IrInput(graph, op, i);
  if (!t) return;
  if (std::find(dtypes.begin(), dtypes.end(), t->dtype) == dtypes.end()) ThrowUnsupportedDtype(graph, op, t->dtype);
}
inline void RequireOutputDtype(const ir::Subgraph& graph, const ir::Op& op, int i,
                               std::initializer_list<ir::DType> dtypes) {
  const ir::Tensor* t = IrOutput(graph, op, i);
  if (!t) return;
  if (std::find(dtypes.begin(), dtypes.end(), t->dtype) == dtypes.end()) ThrowUnsupportedDtype(graph, op, t->dtype);
}

inline void RequireInputCount(const ir::Subgraph& graph, const ir::Op& op, int min, int max) {
  const int n = static_cast<int>(op.inputs.size());
  if (n < min || n > max) ThrowOpUnsupported(graph, op, "expects {} to {} inputs, got {}", min, max, n);
}

// ------------------------------------------------------------------ reading values

// Integer contents of a runtime tensor (int32, int64, int16, uint8, int8), widened.
inline std::vector<int64_t> ReadInts(const KernelContext& ctx, int i) {
  const Tensor& t = ctx.input(i);
  const int64_t n = t.num_elements();
  std::vector<int64_t> v(static_cast<size_t>(n));
  switch (t.dtype) {
    case tfl::TensorType_INT32:
      for (int64_t k = 0; k < n; ++k) v[k] = t.as<int32_t>()[k];
      break;
    case tfl::TensorType_INT64:
      for (int64_t k = 0; k < n; ++k) v[k] = t.as<int64_t>()[k];
      break;
    case tfl::TensorType_INT16:
      for (int64_t k = 0; k < n; ++k) v[k] = t.as<int16_t>()[k];
      break;
    case tfl::TensorType_UINT8:
      for (int64_t k = 0; k < n; ++k) v[k] = t.as<uint8_t>()[k];
      break;
    case tfl::TensorType_INT8:
      for (int64_t k = 0; k < n; ++k) v[k] = t.as<int8_t>()[k];
      break;
    default: ThrowOpBadInput(ctx, "input {} must be an integer tensor, got {}", i, ir::DTypeName(t.dtype));
  }
  return v;
}

inline int64_t ReadScalarInt(const KernelContext& ctx, int i) {
  std::vector<int64_t> v = ReadInts(ctx, i);
  if (v.size() != 1) ThrowOpBadInput(ctx, "input {} must hold one value, got {}", i, v.size());
  return v[0];
}

inline int NormalizeAxisOrThrow(const KernelContext& ctx, int64_t axis, int rank) {
  if (axis < -rank || axis >= rank) ThrowOpBadInput(ctx, "axis {} is out of range for rank {}", axis, rank);
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

inline int64_t ProductOf(std::span<const int32_t> dims, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end && i < dims.size(); ++i) n *= dims[i];
  return n;
}

inline size_t ElementSize(const Tensor& t) { return ir::DTypeSize(t.dtype); }

// Row-major strides of a shape, in elements.
inline std::vector<int64_t> StridesOf(std::span<const int32_t> shape) {
  std::vector<int64_t> s(shape.size());
  int64_t acc = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    s[i] = acc;
    acc *= shape[i];
  }
  return s;
}

// ------------------------------------------------------------------ strided copy

// One strided copy of a box of `shape` elements of `esize` bytes each:
//   dst[sum_i idx_i * dst_strides[i]] = src[sum_i idx_i * src_strides[i]]
// Strides are in elements and may be 0 (broadcast reads). Dimensions are
// merged where both sides allow, contiguous inner runs become memcpy, and the
// outer loop is split over the pool. The destination must not overlap the
// source, and distinct indices must address distinct destination elements.
void CopyStrided(ThreadPool& pool, size_t esize, std::span<const int32_t> shape, const uint8_t* src,
                 std::span<const int64_t> src_strides, uint8_t* dst, std::span<const int64_t> dst_strides);

// Fills `count` elements of `esize` bytes at dst with the element at `value`.
void FillElements(uint8_t* dst, int64_t count, const uint8_t* value, size_t esize);

// Copies the whole of `src` into `dst` when they are different buffers
// (RESHAPE, SQUEEZE, EXPAND_DIMS).
inline void CopyWhole(const Tensor& src, Tensor& dst) {
  const size_t n = std::min(src.bytes, dst.bytes);
  if (dst.data != src.data && n > 0) std::memmove(dst.data, src.data, n);
}

// RESHAPE, SQUEEZE and EXPAND_DIMS: the bytes stay as they are and only the
// shape changes (the interpreter has set it), so eval is a copy. Input 1,
// when the op takes one, is the int32/int64 `role` (shape, axis).
inline void CheckReshapeLike(const ir::Subgraph& graph, const ir::Op& op, int min_inputs, int max_inputs,
                             std::string_view role) {
  RequireInputCount(graph, op, min_inputs, max_inputs);
  RequireMovable(graph, op, {0});
  if (max_inputs > 1) RequireIndexInput(graph, op, 1, role);
}
inline void EvalReshapeLike(KernelContext& ctx) {
  const Tensor& input = ctx.input(0);
  Tensor& output = ctx.output(0);
  if (input.num_elements() != output.num_elements())
    ThrowOpBadInput(ctx, "input has {} elements but the output has {}", input.num_elements(), output.num_elements());
  CopyWhole(input, output);
}

// Copies consecutive pieces of `input` along `axis` into the outputs (SPLIT,
// SPLIT_V): output k takes its own extent along the axis.
void SplitAlongAxis(KernelContext& ctx, const Tensor& input, int axis);

// ------------------------------------------------------------------ padding

// Paddings of input 1 as (before, after) per dimension of input 0; throws
// unless it holds 2 * rank non-negative values.
std::vector<std::pair<int64_t, int64_t>> ReadPaddings(const KernelContext& ctx);

// PAD / PADV2: fills the output with the element at `value` (esize bytes of
// the output's dtype) and copies the input inside.
void EvalConstantPad(KernelContext& ctx, const uint8_t* value);

// ------------------------------------------------------------------ per-row ops

// Calls fn(row_begin, row_end) over the rows of a tensor seen as
// [outer, depth] (depth = last dimension), split over the pool.
template <typename Fn>
void ForEachRow(ThreadPool& pool, int64_t rows, int64_t depth, Fn&& fn) {
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(depth, 1));
  pool.ParallelFor(rows, grain, [&](int64_t begin, int64_t end) { fn(begin, end); });
}

}  // namespace gpuclean::exec::kernels
