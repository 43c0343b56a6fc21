// MAX_POOL_2D: NHWC float32, the maximum of each window (padding never wins), then the fused activation clamp.
#include "exec/kernels/conv_util.h"

namespace gpuclean::exec::kernels {

Kernel MaxPool2DKernel() {
  return {conv::CheckPool2D, [](KernelContext& ctx) { conv::EvalPool2D(ctx, /*max=*/true); }};
}

}  // namespace gpuclean::exec::kernels
