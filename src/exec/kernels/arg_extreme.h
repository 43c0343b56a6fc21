#pragma once
// The core ARG_MAX and ARG_MIN share: the index of the best value along the
// axis of input 1, where a later element wins only when strictly better
// (first one on ties, as LiteRT's reference kernel). The output is int32 or
// int64 per `output_type`.
#include <vector>

#include "exec/kernels/layout_util.h"

namespace gpuclean::exec::kernels::arg_extreme {

inline void Check(const ir::Subgraph& graph, const ir::Op& op) {
  RequireInputCount(graph, op, 2, 2);
  const ir::Tensor* in = IrInput(graph, op, 0);
  if (!in) ThrowOpUnsupported(graph, op, "input 0 is missing");
  switch (in->dtype) {
    case tfl::TensorType_FLOAT32:
    case tfl::TensorType_INT32:
    case tfl::TensorType_INT64:
    case tfl::TensorType_BOOL: break;
    case tfl::TensorType_UINT8:
    case tfl::TensorType_INT8:
      // Quantized inputs are fine: the order of the codes is the order of the values.
      break;
    default: ThrowUnsupportedDtype(graph, op, in->dtype);
  }
  RequireIndexInput(graph, op, 1, "axis");
  RequireOutputDtype(graph, op, 0, {tfl::TensorType_INT32, tfl::TensorType_INT64});
}

template <typename T, typename I, typename Better>
void Run(KernelContext& ctx, int axis, Better better) {
  const Tensor& input = ctx.input(0);
  const int64_t outer = ProductOf(input.shape, 0, axis);
  const int64_t n = input.shape[axis];
  const int64_t inner = ProductOf(input.shape, axis + 1, input.rank());
  if (n == 0) ThrowOpBadInput(ctx, "axis {} is empty", axis);
  const T* in = input.as<const T>();
  I* out = ctx.output(0).as<I>();
  ctx.pool.ParallelFor(outer, std::max<int64_t>(1, 16384 / std::max<int64_t>(n * inner, 1)), [&](int64_t b, int64_t e) {
    std::vector<T> best(inner);
    for (int64_t o = b; o < e; ++o) {
      const T* x = in + o * n * inner;
      I* y = out + o * inner;
      for (int64_t i = 0; i < inner; ++i) {
        best[i] = x[i];
        y[i] = 0;
      }
      for (int64_t a = 1; a < n; ++a)
        for (int64_t i = 0; i < inner; ++i) {
          const T v = x[a * inner + i];
          if (better(v, best[i])) {
            best[i] = v;
            y[i] = static_cast<I>(a);
          }
        }
    }
  });
}

template <typename T, typename Better>
void RunIndexType(KernelContext& ctx, int axis, Better better) {
  if (ctx.output(0).dtype == tfl::TensorType_INT64) {
    Run<T, int64_t>(ctx, axis, better);
  } else {
    Run<T, int32_t>(ctx, axis, better);
  }
}

// `better(v, best)`: whether v replaces the best so far (std::greater for
// ARG_MAX, std::less for ARG_MIN).
template <template <typename> class Better>
void Eval(KernelContext& ctx) {
  const Tensor& input = ctx.input(0);
  const int axis = NormalizeAxisOrThrow(ctx, ReadScalarInt(ctx, 1), input.rank());
  if (ctx.output(0).num_elements() == 0) return;
  switch (input.dtype) {
    case tfl::TensorType_FLOAT32: RunIndexType<float>(ctx, axis, Better<float>()); break;
    case tfl::TensorType_INT32: RunIndexType<int32_t>(ctx, axis, Better<int32_t>()); break;
    case tfl::TensorType_INT64: RunIndexType<int64_t>(ctx, axis, Better<int64_t>()); break;
    case tfl::TensorType_BOOL: RunIndexType<bool>(ctx, axis, Better<bool>()); break;
    case tfl::TensorType_UINT8: RunIndexType<uint8_t>(ctx, axis, Better<uint8_t>()); break;
    case tfl::TensorType_INT8: RunIndexType<int8_t>(ctx, axis, Better<int8_t>()); break;
    default: ThrowOpBadInput(ctx, "dtype {} is not supported", ir::DTypeName(input.dtype));
  }
}

}  // namespace gpuclean::exec::kernels::arg_extreme
