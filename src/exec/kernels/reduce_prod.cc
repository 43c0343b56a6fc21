// REDUCE_PROD: reduction over the axes of input 1 (see EvalReduce in reduce_util).
#include "exec/kernels/reduce_util.h"

namespace gpuclean::exec::kernels {
namespace {
void CheckReduceProd(const ir::Subgraph& graph, const ir::Op& op) { CheckReduce(graph, op, ReduceKind::kProd); }
void EvalReduceProd(KernelContext& ctx) { EvalReduce(ctx, ReduceKind::kProd); }
}  // namespace

Kernel ReduceProdKernel() { return {CheckReduceProd, EvalReduceProd}; }

}  // namespace gpuclean::exec::kernels
