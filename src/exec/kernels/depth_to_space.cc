// DEPTH_TO_SPACE: channel blocks out to s x s pixels (the shared core and the index
// formulas: block_shuffle.h).
#include "exec/kernels/block_shuffle.h"

namespace gpuclean::exec::kernels {

Kernel DepthToSpaceKernel() {
  return {block_shuffle::Check<tfl::DepthToSpaceOptionsT>,
          [](KernelContext& ctx) { block_shuffle::Eval<tfl::DepthToSpaceOptionsT>(ctx, /*to_space=*/true); }};
}

}  // namespace gpuclean::exec::kernels
