// The reductions over the axes of input 1 (FAMILY kReduction in
// src/ir/ops.def with the kReduce rank rule): one ReduceKind per op, the
// loops in reduce_util.cc (CheckReduce / EvalReduce).
#include "exec/kernels/reduce_util.h"

namespace gpuclean::exec::kernels {
namespace {

template <ReduceKind kKind>
Kernel Reduction() {
  return {[](const ir::Subgraph& graph, const ir::Op& op) { CheckReduce(graph, op, kKind); },
          [](KernelContext& ctx) { EvalReduce(ctx, kKind); }};
}

}  // namespace

Kernel SumKernel() { return Reduction<ReduceKind::kSum>(); }
Kernel MeanKernel() { return Reduction<ReduceKind::kMean>(); }
Kernel ReduceMaxKernel() { return Reduction<ReduceKind::kMax>(); }
Kernel ReduceMinKernel() { return Reduction<ReduceKind::kMin>(); }
Kernel ReduceProdKernel() { return Reduction<ReduceKind::kProd>(); }
Kernel ReduceAnyKernel() { return Reduction<ReduceKind::kAny>(); }
Kernel ReduceAllKernel() { return Reduction<ReduceKind::kAll>(); }

}  // namespace gpuclean::exec::kernels
