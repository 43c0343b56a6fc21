#pragma once
// Window geometry (stride, dilation, ONNX pads vs TFLite SAME/VALID) and the
// NHWC plumbing every spatial lowering shares.
#include <algorithm>
#include <vector>

#include "onnx/ops/ops.h"

namespace gpuclean::onnx::ops {

struct Window {
  int64_t in = 0, kernel = 1, stride = 1, dilation = 1, pad_begin = 0, pad_end = 0;
  int64_t Extent() const { return (kernel - 1) * dilation + 1; }
  int64_t Out() const { return (in + pad_begin + pad_end - Extent()) / stride + 1; }
  // TFLite SAME: output ceil(in / stride), padding split with the extra at the end.
  bool IsSame() const {
    const int64_t out = (in + stride - 1) / stride;
    const int64_t total = std::max<int64_t>((out - 1) * stride + Extent() - in, 0);
    return pad_begin == total / 2 && pad_end == total - total / 2 && Out() == out;
  }
};

// Windows of a spatial op from strides/dilations/pads/auto_pad.
std::vector<Window> Windows(NodeContext& ctx, const Dims& spatial_in, const Dims& kernel);

// Pads the NHWC tensor `x` explicitly (with `pad_value`) unless the windows
// are SAME or VALID, and returns the padding mode for the op.
tfl::Padding PadFor(NodeContext& ctx, int& x, std::vector<Window>& w, float pad_value = 0.0f);

// An input as an NHWC rank-4 tensor; 1-D inputs [N, C, W] get H = 1.
struct SpatialInput {
  int tensor = -1;
  Dims spatial;  // {H, W}
  bool one_d = false;
};
SpatialInput NhwcInput(NodeContext& ctx, int index);
// Windows for both spatial dims (H is a size-1 dim for 1-D ops).
std::vector<Window> SpatialWindows(NodeContext& ctx, const SpatialInput& in, Dims kernel);
// Hands an NHWC result back as output k (NWC for 1-D ops).
void NhwcOutput(NodeContext& ctx, int k, int y, bool one_d);

}  // namespace gpuclean::onnx::ops
