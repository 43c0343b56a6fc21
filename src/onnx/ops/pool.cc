// MaxPool / AveragePool (1-D and 2-D, pads, ceil_mode, count_include_pad;
// 3-D as two separable 2-D pools)
// and the global pools. Windows TFLite's SAME/VALID cannot express are padded
// explicitly; average pools then rescale by a constant so the divisor is the
// count ONNX asks for.
#include <cfloat>

#include <fmt/format.h>

#include "onnx/ops/spatial.h"

namespace gpuclean::onnx::ops {
namespace {

// ceil_mode: the last window may hang off the end, as long as it starts
// inside the input or its leading padding.
void ApplyCeilMode(NodeContext& ctx, std::vector<Window>& w) {
  if (!ctx.Int("ceil_mode", 0)) return;
  for (Window& win : w) {
    const int64_t span = win.in + win.pad_begin + win.pad_end - win.Extent();
    int64_t out = (span + win.stride - 1) / win.stride + 1;
    if ((out - 1) * win.stride >= win.in + win.pad_begin) --out;
    const int64_t need = (out - 1) * win.stride + win.Extent() - win.in - win.pad_begin;
    if (need > win.pad_end) win.pad_end = need;
  }
}

// 3-D pools [N, C, D, H, W]: a window maximum (or mean, when every window
// is whole) is separable, so a 2-D pool over (H, W) with N*D as the batch,
// then one over D with H*W flattened, both in NDHWC.
void Pool3D(NodeContext& ctx, bool max) {
  if (max && ctx.HasOutput(1)) ctx.Fail("the Indices output of a 3-D MaxPool is not supported");
  const Dims& s = ctx.Shape(0);
  const Dims kernel = ctx.Ints("kernel_shape");
  if (kernel.size() != 3) ctx.BadModel("kernel_shape does not match the input rank");
  std::vector<Window> w = Windows(ctx, {s[2], s[3], s[4]}, kernel);
  for (const Window& win : w)
    if (win.dilation != 1) ctx.Fail("dilated 3-D pooling is not supported");
  ApplyCeilMode(ctx, w);
  bool padded = false;
  for (const Window& win : w) padded = padded || win.pad_begin || win.pad_end;
  if (padded && !max) ctx.Fail("padded 3-D average pooling is not supported");
  auto& b = ctx.b();
  int x = ctx.TensorIn(0, kToNdhwc);
  if (padded) {
    builder::Paddings p = {{0, 0}};
    for (Window& win : w) {
      p.push_back({static_cast<int32_t>(win.pad_begin), static_cast<int32_t>(win.pad_end)});
      win.in += win.pad_begin + win.pad_end;
      win.pad_begin = win.pad_end = 0;
    }
    p.push_back({0, 0});
    x = b.PadV2(x, p, -FLT_MAX);
  }
  const int32_t n = static_cast<int32_t>(s[0]), c = static_cast<int32_t>(s[1]);
  const int32_t d = static_cast<int32_t>(w[0].in), h = static_cast<int32_t>(w[1].in),
                wd = static_cast<int32_t>(w[2].in);
  const int32_t od = static_cast<int32_t>(w[0].Out()), oh = static_cast<int32_t>(w[1].Out()),
                ow = static_cast<int32_t>(w[2].Out());
  auto pool = [&](int t, int64_t sh, int64_t sw, int64_t kh, int64_t kw) {
    return max ? b.MaxPool2D(t, tfl::Padding_VALID, static_cast<int>(sw), static_cast<int>(sh), static_cast<int>(kw),
                             static_cast<int>(kh))
               : b.AveragePool2D(t, tfl::Padding_VALID, static_cast<int>(sw), static_cast<int>(sh),
                                 static_cast<int>(kw), static_cast<int>(kh));
  };
  int y = pool(b.Reshape(x, {n * d, h, wd, c}), w[1].stride, w[2].stride, w[1].kernel, w[2].kernel);
  y = pool(b.Reshape(y, {n, d, oh * ow, c}), w[0].stride, 1, w[0].kernel, 1);
  ctx.Out(0, b.Reshape(y, {n, od, oh, ow, c}), kToNdhwc);
}

void MaxPool(NodeContext& ctx) {
  if (ctx.Rank(0) == 5) return Pool3D(ctx, true);
  const bool indices = ctx.HasOutput(1);
  const bool column_major = ctx.Int("storage_order", 0) != 0;
  SpatialInput in = NhwcInput(ctx, 0);
  Dims kernel = ctx.Ints("kernel_shape");
  if (in.one_d) kernel.insert(kernel.begin(), 1);
  if (kernel.size() != 2) ctx.BadModel("kernel_shape does not match the input rank");
  std::vector<Window> w = SpatialWindows(ctx, in, kernel);
  ApplyCeilMode(ctx, w);
  int x = in.tensor;
  // Integer inputs (uint8 images) pool in float32, which holds every 8- and
  // 16-bit value exactly; the result is cast back.
  const ir::DType dtype = ctx.b().tensor(x).dtype;
  if (dtype != tfl::TensorType_FLOAT32) {
    if (dtype != tfl::TensorType_UINT8 && dtype != tfl::TensorType_INT8 && dtype != tfl::TensorType_INT16)
      ctx.Fail(fmt::format("MaxPool on {} is not supported", ir::DTypeName(dtype)));
    x = ctx.b().Cast(x, tfl::TensorType_FLOAT32);
  }
  auto back = [&](int y) { return dtype == tfl::TensorType_FLOAT32 ? y : ctx.b().Cast(y, dtype); };
  if (w[0].dilation != 1 || w[1].dilation != 1 || indices) {
    // MAX_POOL_2D has no dilation and no indices: the maximum over one
    // strided slice of the padded input per kernel tap. Indices (ONNX's
    // flattened NCHW position - H and W swapped for storage_order 1 - of the
    // first maximum in window order) follow the
    // same taps over a constant grid of input positions.
    auto& b = ctx.b();
    const Dims out = {w[0].Out(), w[1].Out()};
    const int32_t pt = static_cast<int32_t>(w[0].pad_begin), pl = static_cast<int32_t>(w[1].pad_begin);
    x = b.PadV2(x, {{0, 0}, {pt, static_cast<int32_t>(w[0].pad_end)}, {pl, static_cast<int32_t>(w[1].pad_end)}, {0, 0}},
                -FLT_MAX);
    const auto xs = b.shape(x);  // [N, Hp, Wp, C]
    const int32_t in_h = static_cast<int32_t>(w[0].in), in_w = static_cast<int32_t>(w[1].in);
    int grid = -1;
    if (indices) {
      std::vector<int32_t> pos(static_cast<size_t>(xs[1]) * xs[2], 0);
      for (int32_t h = 0; h < xs[1]; ++h)
        for (int32_t v = 0; v < xs[2]; ++v)
          if (h >= pt && h - pt < in_h && v >= pl && v - pl < in_w)
            pos[h * xs[2] + v] = column_major ? (v - pl) * in_h + (h - pt) : (h - pt) * in_w + (v - pl);
      grid = ctx.ConstI32({1, xs[1], xs[2], 1}, pos);
    }
    int y = -1, idx = -1;
    for (int64_t i = 0; i < w[0].kernel; ++i)
      for (int64_t j = 0; j < w[1].kernel; ++j) {
        const int32_t h0 = static_cast<int32_t>(i * w[0].dilation), w0 = static_cast<int32_t>(j * w[1].dilation);
        const int32_t h1 = h0 + static_cast<int32_t>((out[0] - 1) * w[0].stride + 1);
        const int32_t w1 = w0 + static_cast<int32_t>((out[1] - 1) * w[1].stride + 1);
        const std::vector<int32_t> strides = {1, static_cast<int32_t>(w[0].stride), static_cast<int32_t>(w[1].stride),
                                              1};
        const int tap = b.StridedSlice(x, {0, h0, w0, 0}, {xs[0], h1, w1, xs[3]}, strides);
        const int tap_idx = indices ? b.StridedSlice(grid, {0, h0, w0, 0}, {1, h1, w1, 1}, strides) : -1;
        if (y < 0) {
          y = tap;
          idx = tap_idx;
          continue;
        }
        if (indices) idx = b.SelectV2(b.Greater(tap, y), tap_idx, idx);
        y = b.Maximum(y, tap);
      }
    NhwcOutput(ctx, 0, back(y), in.one_d);
    if (indices) {
      // + (n * C + c) * H * W, which also broadcasts a single tap's indices.
      const int32_t n = xs[0], c = xs[3];
      std::vector<int32_t> base(static_cast<size_t>(n) * c);
      for (int32_t k = 0; k < n * c; ++k) base[k] = k * in_h * in_w;
      NhwcOutput(ctx, 1, b.Add(idx, ctx.ConstI32({n, 1, 1, c}, base)), in.one_d);
    }
    return;
  }
  const tfl::Padding padding = PadFor(ctx, x, w, -FLT_MAX);
  const int y = ctx.b().MaxPool2D(x, padding, static_cast<int>(w[1].stride), static_cast<int>(w[0].stride),
                                  static_cast<int>(w[1].kernel), static_cast<int>(w[0].kernel));
  NhwcOutput(ctx, 0, back(y), in.one_d);
}

void AveragePool(NodeContext& ctx) {
  if (ctx.Rank(0) == 5) return Pool3D(ctx, false);
  SpatialInput in = NhwcInput(ctx, 0);
  Dims kernel = ctx.Ints("kernel_shape");
  if (in.one_d) kernel.insert(kernel.begin(), 1);
  if (kernel.size() != 2) ctx.BadModel("kernel_shape does not match the input rank");
  std::vector<Window> w = SpatialWindows(ctx, in, kernel);
  for (const Window& win : w)
    if (win.dilation != 1) ctx.Fail("dilated average pooling is not supported");
  const std::vector<Window> declared = w;  // pads as given, before ceil_mode
  ApplyCeilMode(ctx, w);
  const bool include_pad = ctx.Int("count_include_pad", 0) != 0;
  auto& b = ctx.b();
  int x = in.tensor;
  bool padded = false, same_ok = !include_pad;
  for (size_t i = 0; i < w.size(); ++i) {
    padded = padded || w[i].pad_begin || w[i].pad_end;
    same_ok = same_ok && w[i].IsSame() && w[i].pad_end == declared[i].pad_end;
  }
  const int sw = static_cast<int>(w[1].stride), sh = static_cast<int>(w[0].stride);
  const int kw = static_cast<int>(w[1].kernel), kh = static_cast<int>(w[0].kernel);
  if (!padded || same_ok) {
    const int y = b.AveragePool2D(x, padded ? tfl::Padding_SAME : tfl::Padding_VALID, sw, sh, kw, kh);
    NhwcOutput(ctx, 0, y, in.one_d);
    return;
  }
  // Zero-pad, average over the full window, then rescale each output cell by
  // window size / the count ONNX divides by (input cells, or input plus
  // declared padding with count_include_pad).
  x = b.Pad(x, {{0, 0},
                {static_cast<int32_t>(w[0].pad_begin), static_cast<int32_t>(w[0].pad_end)},
                {static_cast<int32_t>(w[1].pad_begin), static_cast<int32_t>(w[1].pad_end)},
                {0, 0}});
  int y = b.AveragePool2D(x, tfl::Padding_VALID, sw, sh, kw, kh);
  const auto ys = b.shape(y);
  std::vector<float> scale(static_cast<size_t>(ys[1]) * ys[2]);
  for (int oh = 0; oh < ys[1]; ++oh)
    for (int ow = 0; ow < ys[2]; ++ow) {
      int64_t count[2];
      const int o[2] = {oh, ow};
      for (int d = 0; d < 2; ++d) {
        const int64_t start = o[d] * w[d].stride - w[d].pad_begin;
        const int64_t lo = include_pad ? -declared[d].pad_begin : 0;
        const int64_t hi = include_pad ? w[d].in + declared[d].pad_end : w[d].in;
        count[d] = std::max<int64_t>(std::min(start + w[d].kernel, hi) - std::max(start, lo), 1);
      }
      scale[static_cast<size_t>(oh) * ys[2] + ow] =
          static_cast<float>(kh * kw) / static_cast<float>(count[0] * count[1]);
    }
  y = b.Mul(y, b.ConstF32(ctx.node().outputs[0] + "/divisor", {1, ys[1], ys[2], 1}, scale));
  NhwcOutput(ctx, 0, y, in.one_d);
}

void GlobalPool(NodeContext& ctx, tfl::BuiltinOperator code) {
  const Perm perm = ctx.PermOf(0);
  const int rank = ctx.Rank(0);
  if (rank < 3) ctx.BadModel("global pooling needs a rank >= 3 input");
  std::vector<int32_t> axes;
  for (int a = 2; a < rank; ++a) axes.push_back(StoredAxis(perm, a));
  std::sort(axes.begin(), axes.end());
  ctx.Out(0, ctx.b().Reduce(code, ctx.TensorIn(0, perm), axes, true), perm);
}

}  // namespace

void RegisterPool(Registry& r) {
  r.Add("MaxPool", MaxPool);
  r.Add("AveragePool", AveragePool);
  r.Add("GlobalAveragePool", [](NodeContext& c) { GlobalPool(c, tfl::BuiltinOperator_MEAN); });
  r.Add("GlobalMaxPool", [](NodeContext& c) { GlobalPool(c, tfl::BuiltinOperator_REDUCE_MAX); });
}

}  // namespace gpuclean::onnx::ops
