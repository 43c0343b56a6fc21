// Which tensors the fp16-fused numeric mode keeps in float (docs/numerics.md,
// "fp16-fused: what is stored"). The ML Drift GPU backend links an
// elementwise op into the kernel that computes one of its inputs; that input
// then lives in a float register and is never written as half. It also
// computes a LayerNorm written as MEAN/SUB/square/MEAN/ADD/RSQRT/MUL over the
// last axis as one kernel. Each condition below is what LiteRT.js 2.5.3
// WebGPU was measured to do (tests/analyze/fp16_fused_vs_webgpu_test.cc), not
// a copy of the backend's graph passes.
#include <algorithm>

#include "exec/layer_norm_pattern.h"
#include "gpuclean/exec.h"
#include "gpuclean/op_table.h"

namespace gpuclean::exec {
namespace {

// Ops computed per element that the backend links into another kernel.
bool IsLinkableElementwise(const ir::Op& op) { return ir::IsGpuLinked(op.code); }

bool IsRuntime(const ir::Subgraph& g, int32_t t) { return t >= 0 && !g.tensors[t].is_const(); }

class Fusion {
 public:
  explicit Fusion(const ir::Subgraph& g) : g_(g), consumers_(g.Consumers()), position_(g.ops.size(), -1) {
    const std::vector<int> order = g.TopologicalOrder();
    for (size_t i = 0; i < order.size(); ++i) position_[order[i]] = static_cast<int>(i);
  }

  std::vector<bool> Run() {
    std::vector<bool> fused(g_.tensors.size(), false);
    for (size_t c = 0; c < g_.ops.size(); ++c) {
      const int32_t t = LinkedInput(g_.ops[c]);
      if (t >= 0) fused[t] = true;
    }
    for (size_t m = 0; m < g_.ops.size(); ++m)
      for (int32_t t : LayerNormInternals(static_cast<int>(m))) fused[t] = true;
    // A RESHAPE to the shape it was given moves nothing: the value it passes
    // on stays where its input is. Measured: CONV_2D, an identity RESHAPE,
    // then MUL by a runtime scale keeps sums past 65504 finite on WebGPU
    // fp16, as the same graph without the RESHAPE does
    // (tests/rewrite/dot_scale_first_test.cc).
    for (auto r = g_.ops.rbegin(); r != g_.ops.rend(); ++r) {
      const int32_t in = IdentityReshapeInput(*r);
      if (in >= 0 && fused[r->outputs[0]]) fused[in] = true;
    }
    return fused;
  }

 private:
  // The input of elementwise `op` that stays in a register, or -1. The op is
  // linked into the kernel that runs last among its inputs' producers (the
  // other inputs are ready in memory by then); graph inputs are uploaded
  // before everything. Measured: ADD(t_big, y_small) stays finite when t_big
  // is computed last, whatever the operand order, and overflows when y_small
  // is. The linked input must have the op's output shape: an operand that is
  // broadcast ([1,8,1] against [1,8,256]) is read from memory even when it is
  // computed last.
  int32_t LinkedInput(const ir::Op& op) const {
    if (!IsLinkableElementwise(op) || op.outputs.size() != 1) return -1;
    int32_t latest = -1;
    int latest_position = -1;
    for (int32_t t : op.inputs) {
      if (!IsRuntime(g_, t)) continue;
      const int producer = g_.Producer(t);
      const int p = producer < 0 ? -1 : position_[producer];
      if (p > latest_position) latest_position = p, latest = t;
    }
    if (latest < 0 || latest_position < 0) return -1;
    const ir::Tensor& tensor = g_.tensors[latest];
    // A tensor read back (graph output) or read by a second kernel must be
    // in memory.
    if (tensor.dtype != tfl::TensorType_FLOAT32 || g_.IsGraphOutput(latest) || consumers_[latest].size() != 1)
      return -1;
    if (tensor.shape != g_.tensors[op.outputs[0]].shape) return -1;
    return latest;
  }

  // The input of a RESHAPE that keeps its input's shape, read by nothing
  // else; -1 for any other op.
  int32_t IdentityReshapeInput(const ir::Op& op) const {
    if (op.code != tfl::BuiltinOperator_RESHAPE || op.inputs.empty() || op.outputs.size() != 1) return -1;
    const int32_t in = op.inputs[0];
    if (!IsRuntime(g_, in) || consumers_[in].size() != 1 || g_.IsGraphOutput(in)) return -1;
    if (g_.tensors[in].shape != g_.tensors[op.outputs[0]].shape || g_.tensors[in].dtype != tfl::TensorType_FLOAT32)
      return -1;
    return in;
  }

  // A LayerNorm (layer_norm_pattern.h): the backend computes it as one
  // kernel, so mu, d, s, v, e and r never reach memory (measured: no
  // overflow at |x| ~ 440 and 3000, where s passes 65504). The same
  // statistics written with SQUARED_DIFFERENCE, over another axis, or as
  // RMSNorm are separate kernels and overflow. `m` is the candidate first
  // MEAN; returns the internal tensors, or nothing when the pattern does not
  // match. As measured, the ADD reads the variance first.
  std::vector<int32_t> LayerNormInternals(int m) const {
    const std::optional<LayerNormPattern> p = MatchLayerNorm(g_, consumers_, m);
    if (!p || g_.ops[p->add].inputs[0] != p->v) return {};
    return p->Intermediates();
  }

  const ir::Subgraph& g_;
  std::vector<std::vector<int>> consumers_;
  std::vector<int> position_;  // op index -> place in execution order
};

}  // namespace

std::vector<bool> KeptInFloat(const ir::Subgraph& graph) { return Fusion(graph).Run(); }

}  // namespace gpuclean::exec
