// Window geometry and NHWC plumbing shared by convolutions and pools.
#include "onnx/ops/spatial.h"

#include <fmt/format.h>

namespace gpuclean::onnx::ops {
std::vector<Window> Windows(NodeContext& ctx, const Dims& spatial_in, const Dims& kernel) {
  const size_t n = spatial_in.size();
  const auto strides = ctx.Ints("strides", Dims(n, 1));
  const auto dilations = ctx.Ints("dilations", Dims(n, 1));
  auto pads = ctx.Ints("pads", Dims(2 * n, 0));
  const std::string auto_pad = ctx.Str("auto_pad", "NOTSET");
  if (strides.size() != n || dilations.size() != n || pads.size() != 2 * n)
    ctx.BadModel("strides/dilations/pads do not match the kernel's rank");
  std::vector<Window> w(n);
  for (size_t i = 0; i < n; ++i) {
    w[i].in = spatial_in[i];
    w[i].kernel = kernel[i];
    w[i].stride = strides[i];
    w[i].dilation = dilations[i];
    if (w[i].stride < 1 || w[i].dilation < 1 || w[i].kernel < 1)
      ctx.BadModel("stride, dilation and kernel must be >= 1");
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      const int64_t out = (w[i].in + w[i].stride - 1) / w[i].stride;
      const int64_t total = std::max<int64_t>((out - 1) * w[i].stride + w[i].Extent() - w[i].in, 0);
      w[i].pad_begin = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      w[i].pad_end = total - w[i].pad_begin;
    } else if (auto_pad == "VALID") {
      w[i].pad_begin = w[i].pad_end = 0;
    } else {
      w[i].pad_begin = pads[i];
      w[i].pad_end = pads[i + n];
    }
    if (w[i].pad_begin < 0 || w[i].pad_end < 0) ctx.Fail("negative pads are not supported");
    if (w[i].Out() < 1) ctx.BadModel("the window is larger than the padded input");
  }
  return w;
}

tfl::Padding PadFor(NodeContext& ctx, int& x, std::vector<Window>& w, float pad_value) {
  bool valid = true, same = true;
  for (const Window& win : w) {
    valid = valid && win.pad_begin == 0 && win.pad_end == 0;
    same = same && win.IsSame();
  }
  if (valid) return tfl::Padding_VALID;
  if (same) return tfl::Padding_SAME;
  builder::Paddings p = {{0, 0},
                         {static_cast<int32_t>(w[0].pad_begin), static_cast<int32_t>(w[0].pad_end)},
                         {static_cast<int32_t>(w[1].pad_begin), static_cast<int32_t>(w[1].pad_end)},
                         {0, 0}};
  x = pad_value == 0.0f ? ctx.b().Pad(x, p) : ctx.b().PadV2(x, p, pad_value);
  for (Window& win : w) {
    win.in += win.pad_begin + win.pad_end;
    win.pad_begin = win.pad_end = 0;
  }
  return tfl::Padding_VALID;
}

SpatialInput NhwcInput(NodeContext& ctx, int index) {
  SpatialInput s;
  const Dims& shape = ctx.Shape(index);
  if (shape.size() == 4) {
    s.tensor = ctx.TensorIn(index, kToNhwc);
    s.spatial = {shape[2], shape[3]};
  } else if (shape.size() == 3) {
    s.one_d = true;
    const int nwc = ctx.TensorIn(index, {0, 2, 1});
    s.tensor = ctx.b().Reshape(nwc, ToShape32({shape[0], 1, shape[2], shape[1]}));
    s.spatial = {1, shape[2]};
  } else {
    ctx.Fail(fmt::format("rank-{} input; only 1-D and 2-D spatial ops are converted", shape.size()));
  }
  return s;
}

void NhwcOutput(NodeContext& ctx, int k, int y, bool one_d) {
  if (!one_d) {
    ctx.Out(k, y, kToNhwc);
    return;
  }
  const auto s = ctx.b().shape(y);
  ctx.Out(k, ctx.b().Reshape(y, {s[0], s[2], s[3]}), {0, 2, 1});
}

std::vector<Window> SpatialWindows(NodeContext& ctx, const SpatialInput& in, Dims kernel) {
  if (in.one_d) {
    // The 1-D attributes describe W only; H is a size-1 dimension.
    std::vector<Window> w = Windows(ctx, {in.spatial[1]}, {kernel.back()});
    Window h;
    h.in = 1;
    return {h, w[0]};
  }
  return Windows(ctx, in.spatial, kernel);
}

}  // namespace gpuclean::onnx::ops
