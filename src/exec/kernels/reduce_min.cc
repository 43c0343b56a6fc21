// REDUCE_MIN: reduction over the axes of input 1 (see EvalReduce in reduce_util).
#include "exec/kernels/reduce_util.h"

namespace gpuclean::exec::kernels {
namespace {
void Check(const ir::Subgraph& graph, const ir::Op& op) { CheckReduce(graph, op, ReduceKind::kMin); }
void Eval(KernelContext& ctx) { EvalReduce(ctx, ReduceKind::kMin); }
}  // namespace

Kernel ReduceMinKernel() { return {Check, Eval}; }

}  // namespace gpuclean::exec::kernels
