// TOPK_V2: the k largest values of each last-axis row, in descending order,
// with their int32 indices; equal values keep the lower index first (as
// LiteRT's TopContainer orders them).
#include <numeric>

#include "exec/kernels/layout_util.h"

namespace gpuclean::exec::kernels {
namespace {

void CheckTopkV2(const ir::Subgraph& graph, const ir::Op& op) {
  RequireInputCount(graph, op, 2, 2);
  RequireInputDtype(graph, op, 0, {tfl::TensorType_FLOAT32, tfl::TensorType_INT32, tfl::TensorType_INT64});
  const ir::Tensor* in = IrInput(graph, op, 0);
  if (!in) ThrowOpUnsupported(graph, op, "input 0 is missing");
  RequireOutputDtype(graph, op, 0, {in->dtype});
  RequireInputDtype(graph, op, 1, {tfl::TensorType_INT32, tfl::TensorType_INT16});
  RequireOutputDtype(graph, op, 1, {tfl::TensorType_INT32, tfl::TensorType_INT16});
}

template <typename T, typename I>
void TopK(KernelContext& ctx, int64_t k) {
  const Tensor& input = ctx.input(0);
  const int64_t depth = input.dim(-1);
  const int64_t rows = depth == 0 ? 0 : input.num_elements() / depth;
  const T* in = input.as<const T>();
  T* values = ctx.output(0).as<T>();
  I* indices = ctx.output(1).as<I>();
  ForEachRow(ctx.pool, rows, depth, [&](int64_t begin, int64_t end) {
    std::vector<int32_t> order(depth);
    for (int64_t r = begin; r < end; ++r) {
      const T* x = in + r * depth;
      std::iota(order.begin(), order.end(), 0);
      auto before = [x](int32_t a, int32_t b) { return x[a] > x[b] || (x[a] == x[b] && a < b); };
      std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
      for (int64_t i = 0; i < k; ++i) {
        values[r * k + i] = x[order[i]];
        indices[r * k + i] = static_cast<I>(order[i]);
      }
    }
  });
}

template <typename T>
void TopKIndexType(KernelContext& ctx, int64_t k) {
  if (ctx.output(1).dtype == tfl::TensorType_INT16) {
    TopK<T, int16_t>(ctx, k);
  } else {
    TopK<T, int32_t>(ctx, k);
  }
}

void EvalTopkV2(KernelContext& ctx) {
  const Tensor& input = ctx.input(0);
  if (input.rank() < 1) ThrowOpBadInput(ctx, "input must have rank >= 1");
  const int64_t k = ReadScalarInt(ctx, 1);
  if (k < 0 || k > input.dim(-1)) ThrowOpBadInput(ctx, "k = {} is outside [0, {}]", k, input.dim(-1));
  if (ctx.output(0).dim(-1) != k)
    ThrowOpBadInput(ctx, "output last dimension is {}, k is {}", ctx.output(0).dim(-1), k);
  switch (input.dtype) {
    case tfl::TensorType_FLOAT32: TopKIndexType<float>(ctx, k); break;
    case tfl::TensorType_INT32: TopKIndexType<int32_t>(ctx, k); break;
    case tfl::TensorType_INT64: TopKIndexType<int64_t>(ctx, k); break;
    default: ThrowOpBadInput(ctx, "dtype {} is not supported", ir::DTypeName(input.dtype));
  }
}

}  // namespace

Kernel TopkV2Kernel() { return {CheckTopkV2, EvalTopkV2}; }

}  // namespace gpuclean::exec::kernels
