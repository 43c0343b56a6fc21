// The conv family's shared rules: activation clamps, window padding, the
// checks and messages every conv-family kernel uses. See conv_util.h; the
// SIMD dispatch is conv_isa.cc, the GEMM conv_gemm.cc, pooling conv_pool.cc,
// the transposed-convolution core conv_transpose.cc.

#include "exec/kernels/conv_util.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "gpuclean/error.h"
#include "gpuclean/shapes.h"

namespace gpuclean::exec::kernels::conv {

// ------------------------------------------------------------------ rules

Clamp ActivationClamp(tfl::ActivationFunctionType act) {
  const Range<float> range = ActivationRange<float>(act);
  return {range.lo, range.hi};
}

Clamp ActivationClampFromTfLite(int32_t act) {
  switch (act) {
    case 1: return ActivationClamp(tfl::ActivationFunctionType_RELU);
    case 2: return ActivationClamp(tfl::ActivationFunctionType_RELU_N1_TO_1);
    case 3: return ActivationClamp(tfl::ActivationFunctionType_RELU6);
    default: return Clamp{};
  }
}

int32_t PaddingBefore(int32_t in, int32_t filter, int32_t stride, int32_t dilation, int32_t out) {
  // A VALID window never reaches past the input, so SAME's rule gives it 0.
  return ir::ComputeWindowPadding(tfl::Padding_SAME, in, filter, stride, dilation, out).before;
}

void ThrowUnsupportedAttr(const ir::Subgraph& graph, const ir::Op& op, const std::string& what) {
  ThrowUnsupported(fmt::format("{}: {} is not supported by gpuclean's interpreter", OpLabel(graph, op), what));
}

void ThrowBadInput(const ir::Subgraph& graph, const ir::Op& op, const std::string& what) {
  ::gpuclean::ThrowBadInput(fmt::format("{}: {}", OpLabel(graph, op), what));
}

void RequireFloat32(const ir::Subgraph& graph, const ir::Op& op) {
  RequireDtypes(graph, op, {tfl::TensorType_FLOAT32});
}

int InputRank(const ir::Subgraph& graph, const ir::Op& op, int i) {
  if (i >= static_cast<int>(op.inputs.size()) || op.inputs[i] < 0) return -1;
  return graph.tensors[op.inputs[i]].rank();
}

int64_t GrainFor([[maybe_unused]] int64_t items, int64_t work_per_item) {
  // About 32k multiply-adds per chunk keeps the pool's overhead invisible.
  constexpr int64_t kMinWork = 32 * 1024;
  return std::max<int64_t>(1, kMinWork / std::max<int64_t>(1, work_per_item));
}

}  // namespace gpuclean::exec::kernels::conv
