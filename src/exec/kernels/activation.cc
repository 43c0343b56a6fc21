// The parameterless activations (FAMILY kActivation in src/ir/ops.def):
// float32 -> float32, one function per op. LEAKY_RELU, PRELU, GELU and
// LOGISTIC, which have options or several inputs or their own fast path,
// keep files of their own.
#include "exec/kernels/elementwise_util.h"

namespace gpuclean::exec::kernels {
namespace {

// std::max(x, 0) returns x when x is NaN: NaN passes through, as in LiteRT.js.
float Relu(float x) { return std::max(x, 0.0f); }
float Relu6(float x) { return std::min(std::max(x, 0.0f), 6.0f); }
float ReluN1To1(float x) { return std::min(std::max(x, -1.0f), 1.0f); }
float Relu0To1(float x) { return std::min(std::max(x, 0.0f), 1.0f); }
float Tanh(float x) { return std::tanh(x); }
// alpha = 1: LiteRT's ELU has no alpha option.
float Elu(float x) { return x < 0.0f ? std::expm1(x) : x; }
// x * relu6(x + 3) / 6; hard_swish(-inf) is NaN, as in LiteRT.
float HardSwish(float x) { return x * std::min(std::max(x + 3.0f, 0.0f), 6.0f) * (1.0f / 6.0f); }

}  // namespace

Kernel ReluKernel() { return ew::FloatMapKernel<Relu>(); }
Kernel Relu6Kernel() { return ew::FloatMapKernel<Relu6>(); }
Kernel ReluN1To1Kernel() { return ew::FloatMapKernel<ReluN1To1>(); }
Kernel Relu0To1Kernel() { return ew::FloatMapKernel<Relu0To1>(); }
Kernel TanhKernel() { return ew::FloatMapKernel<Tanh>(); }
Kernel EluKernel() { return ew::FloatMapKernel<Elu>(); }
Kernel HardSwishKernel() { return ew::FloatMapKernel<HardSwish>(); }

}  // namespace gpuclean::exec::kernels
