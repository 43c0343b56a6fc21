// REDUCE_PROD: reduction over the axes of input 1 (see EvalReduce in reduce_util).
#include "exec/kernels/reduce_util.h"

namespace gpuclean::exec::kernels {
namespace {
void Check(const ir::Subgraph& graph, const ir::Op& op) { CheckReduce(graph, op, ReduceKind::kProd); }
void Eval(KernelContext& ctx) { EvalReduce(ctx, ReduceKind::kProd); }
}  // namespace

Kernel ReduceProdKernel() { return {Check, Eval}; }

}  // namespace gpuclean::exec::kernels
