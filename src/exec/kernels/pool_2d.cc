// The builtin 2-D pooling ops (FAMILY kPooling in src/ir/ops.def): NHWC
// float32, each window over its in-bounds elements only (SAME padding does
// not count, as in LiteRT), then the fused activation clamp; the loops are in
// conv_pool.cc.
//
// AVERAGE_POOL_2D (and L2_POOL_2D's mean square): fp16-compute keeps this
// accumulation in float, as GPU pooling shaders sum the window in a float
// accumulator (docs/numerics.md); models that pool whole 128x128 maps (selfie
// segmentation) run correctly on half GPUs.
#include "exec/kernels/conv_util.h"

namespace gpuclean::exec::kernels {
namespace {

template <conv::PoolKind kKind>
Kernel Pooling() {
  return {conv::CheckPool2D, [](KernelContext& ctx) { conv::EvalPool2D(ctx, kKind); }};
}

}  // namespace

Kernel MaxPool2DKernel() { return Pooling<conv::PoolKind::kMax>(); }
Kernel AveragePool2DKernel() { return Pooling<conv::PoolKind::kAverage>(); }
Kernel L2Pool2DKernel() { return Pooling<conv::PoolKind::kL2>(); }

}  // namespace gpuclean::exec::kernels
