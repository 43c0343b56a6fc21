// CUMSUM along the axis of input 1: inclusive running sums, or exclusive
// (each output excludes its own element), optionally from the end.
#include "exec/kernels/elementwise_util.h"
#include "exec/kernels/fp16_compute.h"
#include "exec/kernels/layout_util.h"

namespace gpuclean::exec::kernels {
namespace {

void CheckCumsum(const ir::Subgraph& graph, const ir::Op& op) {
  RequireInputCount(graph, op, 2, 2);
  RequireInputDtype(graph, op, 0, {tfl::TensorType_FLOAT32, tfl::TensorType_INT32, tfl::TensorType_INT64});
  const ir::Tensor* in = IrInput(graph, op, 0);
  if (!in) ThrowOpUnsupported(graph, op, "input 0 is missing");
  RequireOutputDtype(graph, op, 0, {in->dtype});
  RequireIndexInput(graph, op, 1, "axis");
}

// fp16-compute: the running sum is a half register, rounded each step.
struct HalfSum {};

template <typename T, typename Mode = T>
void Run(KernelContext& ctx, int axis, bool exclusive, bool reverse) {
  const auto accumulate = [](T a, T b) {
    if constexpr (std::is_same_v<Mode, HalfSum>) {
      return fp16::Round(a + b);
    } else {
      return ew::WrapAdd(a, b);
    }
  };
  const Tensor& input = ctx.input(0);
  const int64_t outer = ProductOf(input.shape, 0, axis);
  const int64_t n = input.shape[axis];
  const int64_t inner = ProductOf(input.shape, axis + 1, input.rank());
  const T* in = input.as<const T>();
  T* out = ctx.output(0).as<T>();
  ctx.pool.ParallelFor(outer, std::max<int64_t>(1, 16384 / std::max<int64_t>(n * inner, 1)), [&](int64_t b, int64_t e) {
    std::vector<T> acc(inner);
    for (int64_t o = b; o < e; ++o) {
      std::fill(acc.begin(), acc.end(), T(0));
      for (int64_t step = 0; step < n; ++step) {
        const int64_t a = reverse ? n - 1 - step : step;
        const T* x = in + (o * n + a) * inner;
        T* y = out + (o * n + a) * inner;
        // Accumulation: the running sum.
        if (exclusive) {
          for (int64_t i = 0; i < inner; ++i) {
            y[i] = acc[i];
            acc[i] = accumulate(acc[i], x[i]);
          }
        } else {
          for (int64_t i = 0; i < inner; ++i) {
            acc[i] = accumulate(acc[i], x[i]);
            y[i] = acc[i];
          }
        }
      }
    }
  });
}

void EvalCumsum(KernelContext& ctx) {
  const Tensor& input = ctx.input(0);
  const int axis = NormalizeAxisOrThrow(ctx, ReadScalarInt(ctx, 1), input.rank());
  const auto options = OptionsOr<tfl::CumsumOptionsT>(ctx.op);
  if (input.num_elements() == 0) return;
  switch (input.dtype) {
    case tfl::TensorType_FLOAT32:
      if (fp16::Active(ctx))
        Run<float, HalfSum>(ctx, axis, options.exclusive, options.reverse);
      else
        Run<float>(ctx, axis, options.exclusive, options.reverse);
      break;
    case tfl::TensorType_INT32: Run<int32_t>(ctx, axis, options.exclusive, options.reverse); break;
    case tfl::TensorType_INT64: Run<int64_t>(ctx, axis, options.exclusive, options.reverse); break;
    default: ThrowOpBadInput(ctx, "dtype {} is not supported", ir::DTypeName(input.dtype));
  }
}

}  // namespace

Kernel CumsumKernel() { return {CheckCumsum, EvalCumsum}; }

}  // namespace gpuclean::exec::kernels
