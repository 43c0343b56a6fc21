// SUM: reduction over the axes of input 1 (see EvalReduce in reduce_util).
#include "exec/kernels/reduce_util.h"

namespace gpuclean::exec::kernels {
namespace {
void CheckSum(const ir::Subgraph& graph, const ir::Op& op) { CheckReduce(graph, op, ReduceKind::kSum); }
void EvalSum(KernelContext& ctx) { EvalReduce(ctx, ReduceKind::kSum); }
}  // namespace

Kernel SumKernel() { return {CheckSum, EvalSum}; }

}  // namespace gpuclean::exec::kernels
