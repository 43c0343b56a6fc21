#pragma once
// Helpers of the reduction family (MEAN, SUM, REDUCE_MAX, REDUCE_MIN,
// REDUCE_PROD, REDUCE_ANY, REDUCE_ALL), as ir/shapes_reduce.cc holds their
// shape rules.
#include "exec/kernels/layout_util.h"

namespace gpuclean::exec::kernels {

// The reductions share one implementation (REDUCE_ANY and REDUCE_ALL over
// bool, the others over float32, int32 and int64):
// input 0 is reduced over the axes listed in input 1 (negative and repeated
// axes allowed; none at all copies the input). keep_dims only changes the
// output shape, which the interpreter has already set.
enum class ReduceKind { kSum, kMean, kMax, kMin, kProd, kAny, kAll };
void CheckReduce(const ir::Subgraph& graph, const ir::Op& op, ReduceKind kind);
void EvalReduce(KernelContext& ctx, ReduceKind kind);

}  // namespace gpuclean::exec::kernels
