// ARG_MIN: index of the smallest value along the axis of input 1 (first one on
// ties); the core is arg_extreme.h.
#include <functional>

#include "exec/kernels/arg_extreme.h"

namespace gpuclean::exec::kernels {

Kernel ArgMinKernel() { return {arg_extreme::Check, arg_extreme::Eval<std::less>}; }

}  // namespace gpuclean::exec::kernels
