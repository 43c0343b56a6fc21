#pragma once
// What a kernel sees. One function per op under kernels/ (a file per op, or
// per family with one function per row); kernels/table.cc registers them
// from the op table's KERNEL column (src/ir/ops.def).
#include <fmt/format.h>

#include <any>
#include <array>
#include <functional>
#include <vector>

#include "gpuclean/error.h"
#include "gpuclean/exec.h"
#include "gpuclean/ir.h"

namespace gpuclean::exec {

class ThreadPool {
 public:
  explicit ThreadPool(int threads);
  ~ThreadPool();
  int size() const { return threads_; }
  // Splits [0, n) into contiguous chunks of at least `grain` items and runs
  // fn(begin, end) on them in parallel; returns when all are done.
  void ParallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

 private:
  struct State;
  int threads_;
  std::unique_ptr<State> state_;
};

struct KernelContext {
  const ir::Subgraph& graph;
  const ir::Op& op;
  int op_index;
  std::vector<const Tensor*> in;  // nullptr where an optional input is omitted
  std::vector<Tensor*> out;       // shape set and memory allocated before eval
  ThreadPool& pool;
  Precision precision;
  // This op's own state across invocations of one interpreter: what a kernel
  // derives once from inputs whose values never change (packed GEMM weights).
  std::any* state = nullptr;
  // Per tensor: its value is fixed for the interpreter's life (a constant, or
  // folded from constants at prepare time).
  const std::vector<bool>* fixed = nullptr;
  // CONV_2D, DEPTHWISE_CONV_2D and MAX_POOL_2D only: input(0) is the input
  // of a PAD the interpreter skipped (AbsorbPads), to be read as if padded
  // by {top, bottom, left, right}, the padding's taps being outside the
  // input. All zero otherwise.
  std::array<int, 4> input_pad{};

  const Tensor& input(int i) const { return *in.at(i); }
  Tensor& output(int i) const { return *out.at(i); }
  bool has_input(int i) const { return i < static_cast<int>(in.size()) && in[i] != nullptr; }
  bool input_is_fixed(int i) const {
    return has_input(i) && fixed && op.inputs[i] >= 0 && static_cast<size_t>(op.inputs[i]) < fixed->size() &&
           (*fixed)[op.inputs[i]];
  }
};

struct Kernel {
  // Optional. Called once at prepare; throws Error(kUnsupported) when this
  // op's dtypes or attributes are not handled (say which).
  void (*check)(const ir::Subgraph& graph, const ir::Op& op) = nullptr;
  void (*eval)(KernelContext& ctx) = nullptr;
};

// nullptr when no kernel exists for the op.
const Kernel* FindKernel(const ir::Op& op);
// Kernels the interpreter runs in place of an op's own when it skips the ops
// before it. MUL(x, LOGISTIC(x)) with the LOGISTIC skipped (FuseSilu):
// input(0) is x (logistic.cc). A LayerNorm's normalizing MUL with the six
// ops before it skipped (FuseLayerNorms): input(0) is x, input(1) the
// epsilon (layer_norm.cc).
namespace kernels {
Kernel FusedSiluKernel();
Kernel FusedLayerNormKernel();
}  // namespace kernels

// Throws the standard "unsupported" error for an op at a node.
[[noreturn]] void ThrowUnsupportedDtype(const ir::Subgraph& graph, const ir::Op& op, ir::DType dtype);
// Checks every input and output that is present has one of `dtypes`.
void RequireDtypes(const ir::Subgraph& graph, const ir::Op& op, std::initializer_list<ir::DType> dtypes);

}  // namespace gpuclean::exec
