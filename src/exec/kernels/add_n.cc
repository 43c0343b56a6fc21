// ADD_N: the sum of any number of same-shape float32 or int32 inputs, added
// in input order (tflite/kernels/add_n.cc). fp16-compute rounds each partial
// sum to half, as a GPU adding in half would.
#include <type_traits>

#include "exec/kernels/elementwise_util.h"
#include "exec/kernels/fp16_compute.h"
#include "exec/kernels/layout_util.h"

namespace gpuclean::exec::kernels {
namespace {

void CheckAddN(const ir::Subgraph& graph, const ir::Op& op) {
  RequireInputCount(graph, op, 2, 1 << 16);
  const ir::Tensor* first = IrInput(graph, op, 0);
  if (!first) ThrowOpUnsupported(graph, op, "input 0 is missing");
  for (int i = 0; i < static_cast<int>(op.inputs.size()); ++i) {
    RequireInputDtype(graph, op, i, {tfl::TensorType_FLOAT32, tfl::TensorType_INT32});
    const ir::Tensor* t = IrInput(graph, op, i);
    if (!t || t->dtype != first->dtype) ThrowOpUnsupported(graph, op, "input {} is missing or of another dtype", i);
  }
  RequireOutputDtype(graph, op, 0, {first->dtype});
}

template <typename T>
void AddNOf(KernelContext& ctx) {
  Tensor& output = ctx.output(0);
  const int64_t n = output.num_elements();
  for (size_t i = 0; i < ctx.in.size(); ++i)
    if (ctx.input(static_cast<int>(i)).num_elements() != n)
      ThrowOpBadInput(ctx, "input {} has shape {}, the output {}", i, ir::FormatShape(ctx.input(i).shape),
                      ir::FormatShape(output.shape));
  const bool half = std::is_same_v<T, float> && fp16::Active(ctx);
  T* out = output.as<T>();
  const T* a = ctx.input(0).as<const T>();
  const T* b = ctx.input(1).as<const T>();
  ctx.pool.ParallelFor(n, 1 << 15, [&](int64_t begin, int64_t end) {
    for (int64_t e = begin; e < end; ++e) {
      T acc = ew::WrapAdd(a[e], b[e]);
      if constexpr (std::is_same_v<T, float>)
        if (half) acc = fp16::Round(acc);
      for (size_t i = 2; i < ctx.in.size(); ++i) {
        acc = ew::WrapAdd(acc, ctx.in[i]->template as<const T>()[e]);
        if constexpr (std::is_same_v<T, float>)
          if (half) acc = fp16::Round(acc);
      }
      out[e] = acc;
    }
  });
}

void EvalAddN(KernelContext& ctx) {
  if (ctx.output(0).dtype == tfl::TensorType_INT32)
    AddNOf<int32_t>(ctx);
  else
    AddNOf<float>(ctx);
}

}  // namespace

Kernel AddNKernel() { return {CheckAddN, EvalAddN}; }

}  // namespace gpuclean::exec::kernels
