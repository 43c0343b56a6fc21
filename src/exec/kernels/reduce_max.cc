// REDUCE_MAX: reduction over the axes of input 1 (see EvalReduce in reduce_util).
#include "exec/kernels/reduce_util.h"

namespace gpuclean::exec::kernels {
namespace {
void CheckReduceMax(const ir::Subgraph& graph, const ir::Op& op) { CheckReduce(graph, op, ReduceKind::kMax); }
void EvalReduceMax(KernelContext& ctx) { EvalReduce(ctx, ReduceKind::kMax); }
}  // namespace

Kernel ReduceMaxKernel() { return {CheckReduceMax, EvalReduceMax}; }

}  // namespace gpuclean::exec::kernels
