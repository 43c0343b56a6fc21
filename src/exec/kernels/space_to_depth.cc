// SPACE_TO_DEPTH: s x s pixels into channel blocks (the shared core and the index
// formulas: block_shuffle.h).
#include "exec/kernels/block_shuffle.h"

namespace gpuclean::exec::kernels {

Kernel SpaceToDepthKernel() {
  return {block_shuffle::Check<tfl::SpaceToDepthOptionsT>,
          [](KernelContext& ctx) { block_shuffle::Eval<tfl::SpaceToDepthOptionsT>(ctx, /*to_space=*/false); }};
}

}  // namespace gpuclean::exec::kernels
