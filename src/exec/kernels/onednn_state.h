#pragma once
// What onednn.cc and onednn_codes.cc share when oneDNN is built in: the CPU
// engine, the per-op state kept in KernelContext::state, and running a
// primitive on the interpreter's thread count.
#if defined(GPUCLEAN_WITH_ONEDNN)
#include <memory>
#include <oneapi/dnnl/dnnl.hpp>
#include <unordered_map>
#include <vector>

#include "exec/kernel.h"

namespace gpuclean::exec::kernels::conv::onednn {

struct CodesConv;  // onednn_codes.cc

struct OneDnnState {
  dnnl::primitive primitive;  // the fp32 one; null until an fp32 run needs it
  dnnl::memory weights, bias;
  const float* source = nullptr;          // the op's weights when built
  int64_t rows = 0;                       // FULLY_CONNECTED: the M it was built for
  dnnl::memory::desc src, wei, dst;       // BATCH_MATMUL: its operands' layouts
  std::vector<int32_t> x_shape, y_shape;  // BATCH_MATMUL: the shapes it was built for
  // CONV_2D on integer codes: decided once per op from its weights; null
  // where they are not codes.
  bool codes_decided = false;
  std::shared_ptr<CodesConv> codes;
};

dnnl::engine& CpuEngine();

// The op's cached state: null when none yet, or when this op runs our GEMM
// (its state holds the packed weights instead; *other is then true).
std::shared_ptr<OneDnnState> Cached(const KernelContext& ctx, bool* other);

// OpenMP's thread count for what follows (onednn.cc says why it is set
// before a primitive is built, not only before it runs).
void UseThreads(const KernelContext& ctx);

// Runs `primitive` with `args`; a failure is an internal error naming the op.
void Execute(const KernelContext& ctx, const dnnl::primitive& primitive,
             const std::unordered_map<int, dnnl::memory>& args);

// Padding after the last element along one axis that makes oneDNN's output
// size `out`; -1 where none does.
int PaddingAfter(int in, int k, int stride, int dil, int before, int out);

}  // namespace gpuclean::exec::kernels::conv::onednn
#endif
