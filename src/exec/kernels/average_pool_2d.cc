// AVERAGE_POOL_2D: NHWC float32, the mean of each window over its in-bounds elements only (SAME padding does not count,
// as in LiteRT), then the fused activation clamp. fp16-compute keeps this
// accumulation in float: GPU pooling shaders sum the window in a float
// accumulator (docs/numerics.md); models that pool whole 128x128 maps (selfie
// segmentation) run correctly on half GPUs.
#include "exec/kernels/conv_util.h"

namespace gpuclean::exec::kernels {

Kernel AveragePool2DKernel() {
  return {conv::CheckPool2D, [](KernelContext& ctx) { conv::EvalPool2D(ctx, /*max=*/false); }};
}

}  // namespace gpuclean::exec::kernels
