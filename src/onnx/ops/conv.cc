// Conv and ConvTranspose (1-D and 2-D): NHWC in and out, weights re-laid out
// at convert time. Depthwise groups map to DEPTHWISE_CONV_2D, other groups
// to one convolution per group; ONNX's explicit pads become SAME/VALID when
// they agree, a PAD otherwise.
#include <cstring>

#include <fmt/format.h>

#include "onnx/ops/spatial.h"

namespace gpuclean::onnx::ops {
namespace {

npy::Array Slice0(const npy::Array& a, int64_t begin, int64_t count) {
  npy::Array out;
  out.dtype = a.dtype;
  out.shape = a.shape;
  out.shape[0] = count;
  const size_t row = a.data.size() / a.shape[0];
  out.data.assign(a.data.begin() + begin * row, a.data.begin() + (begin + count) * row);
  return out;
}

npy::Array ToF32(NodeContext& ctx, int index) {
  npy::Array a;
  a.dtype = tfl::TensorType_FLOAT32;
  a.shape = ctx.Shape(index);
  const auto values = ctx.ConstFloats(index);
  a.data.resize(values.size() * 4);
  if (!values.empty()) std::memcpy(a.data.data(), values.data(), a.data.size());
  return a;
}

std::vector<float> Floats(const npy::Array& a) { return {a.as<float>(), a.as<float>() + a.num_elements()}; }

// The Conv's `group`, checked against its input channels and weights
// [O, C/g, ...].
int64_t CheckedGroups(NodeContext& ctx, const npy::Array& weights) {
  const int64_t out_channels = weights.shape[0], group_channels = weights.shape[1];
  const int64_t channels = ctx.Shape(0)[1], groups = ctx.Int("group", 1);
  if (groups < 1 || channels != group_channels * groups || out_channels % groups != 0)
    ctx.BadModel(
        fmt::format("{} input channels, weights for {} per group, group {}", channels, group_channels, groups));
  return groups;
}

// The optional bias input, zeros when absent.
std::vector<float> ConvBias(NodeContext& ctx, int64_t out_channels) {
  if (!ctx.Has(2)) return std::vector<float>(static_cast<size_t>(out_channels), 0.0f);
  std::vector<float> bias = ctx.ConstFloats(2);
  if (static_cast<int64_t>(bias.size()) != out_channels) ctx.BadModel("bias size does not match the output channels");
  return bias;
}

// The 2-D convolution of NHWC `x` by ONNX-layout weights [O, I/g, kH, kW]
// over windows `w` (already padded to `padding`): CONV_2D, DEPTHWISE_CONV_2D
// for depthwise groups, one CONV_2D per group otherwise.
int EmitConv2D(NodeContext& ctx, int x, const npy::Array& weights, const std::vector<float>& bias, int64_t groups,
               tfl::Padding padding, const std::vector<Window>& w, const std::string& name) {
  auto& b = ctx.b();
  const int64_t out_channels = weights.shape[0], group_channels = weights.shape[1];
  const int sh = static_cast<int>(w[0].stride), sw = static_cast<int>(w[1].stride);
  const int dh = static_cast<int>(w[0].dilation), dw = static_cast<int>(w[1].dilation);
  if (groups == 1) {
    const npy::Array f = TransposeHost(weights, {0, 2, 3, 1});
    return b.Conv2D(x, b.ConstF32(name + "/filter", ToShape32(f.shape), Floats(f)),
                    b.ConstF32(name + "/bias", {static_cast<int32_t>(out_channels)}, bias), padding, sw, sh,
                    builder::kNoActivation, dw, dh);
  }
  if (group_channels == 1) {
    // Depthwise: [O, 1, kH, kW] -> [1, kH, kW, O].
    const npy::Array f = TransposeHost(weights, {1, 2, 3, 0});
    return b.DepthwiseConv2D(x, b.ConstF32(name + "/filter", ToShape32(f.shape), Floats(f)),
                             b.ConstF32(name + "/bias", {static_cast<int32_t>(out_channels)}, bias), padding, sw, sh,
                             builder::kNoActivation, dw, dh);
  }
  const int64_t per_group = out_channels / groups;
  const auto parts = b.Split(x, 3, static_cast<int32_t>(groups));
  std::vector<int> outs;
  for (int64_t g = 0; g < groups; ++g) {
    const npy::Array f = TransposeHost(Slice0(weights, g * per_group, per_group), {0, 2, 3, 1});
    const std::vector<float> gb(bias.begin() + g * per_group, bias.begin() + (g + 1) * per_group);
    const std::string group_name = fmt::format("{}/group{}", name, g);
    outs.push_back(b.Conv2D(parts[g], b.ConstF32(group_name + "/filter", ToShape32(f.shape), Floats(f)),
                            b.ConstF32(group_name + "/bias", {static_cast<int32_t>(per_group)}, gb), padding, sw, sh,
                            builder::kNoActivation, dw, dh));
  }
  return b.Concatenation(outs, 3);
}

// Weights [O, I, kD, kH, kW] -> the 2-D weights [O, I * taps.size(), kH, kW]
// of the temporal taps `taps`, tap-major along the input channels (the order
// their frame stacks are concatenated in).
npy::Array TemporalTaps(const npy::Array& w, const std::vector<int64_t>& taps) {
  const int64_t o = w.shape[0], i = w.shape[1], kd = w.shape[2], plane = w.shape[3] * w.shape[4];
  npy::Array out;
  out.dtype = tfl::TensorType_FLOAT32;
  out.shape = {o, i * static_cast<int64_t>(taps.size()), w.shape[3], w.shape[4]};
  out.data.resize(static_cast<size_t>(o * i * static_cast<int64_t>(taps.size()) * plane) * 4);
  float* dst = out.as<float>();
  const float* src = w.as<float>();
  for (int64_t a = 0; a < o; ++a)
    for (size_t t = 0; t < taps.size(); ++t)
      for (int64_t c = 0; c < i; ++c)
        std::memcpy(dst + ((a * static_cast<int64_t>(taps.size()) + static_cast<int64_t>(t)) * i + c) * plane,
                    src + ((a * i + c) * kd + taps[t]) * plane, static_cast<size_t>(plane) * 4);
  return out;
}

// 3-D convolutions [N, C, D, H, W] (video, volumes). The GPU has no 3-D
// convolution, and one is the sum over its temporal taps of 2-D
// convolutions of the frames each tap reads. Frames become the batch
// (NDHWC, [N*D, H, W, C]); a tap's frames are one strided slice along D.
// Ungrouped, the taps' frame stacks are concatenated along channels, so a
// single CONV_2D with kD*C input channels sums them inside its dot product
// (one op where the GPU would otherwise run kD convolutions and kD-1 adds);
// grouped, each tap is its own 2-D convolution and they are added.
void Conv3D(NodeContext& ctx) {
  ctx.Const(1);
  const npy::Array weights = ToF32(ctx, 1);  // [O, C/g, kD, kH, kW]
  if (weights.shape.size() != 5) ctx.BadModel("weights are not rank 5");
  const Dims& s = ctx.Shape(0);
  const int64_t out_channels = weights.shape[0], channels = s[1];
  const int64_t groups = CheckedGroups(ctx, weights);
  const std::vector<float> bias = ConvBias(ctx, out_channels);
  const std::vector<Window> w =
      Windows(ctx, {s[2], s[3], s[4]}, {weights.shape[2], weights.shape[3], weights.shape[4]});
  auto& b = ctx.b();
  const int32_t n = static_cast<int32_t>(s[0]), c = static_cast<int32_t>(channels), d = static_cast<int32_t>(s[2]);
  int frames = b.Reshape(ctx.TensorIn(0, kToNdhwc), {n * d, static_cast<int32_t>(s[3]), static_cast<int32_t>(s[4]), c});
  std::vector<Window> plane = {w[1], w[2]};
  const tfl::Padding padding = PadFor(ctx, frames, plane);
  const auto fs = b.shape(frames);  // a copy: [N*D, Hp, Wp, C]
  const int32_t row = fs[1] * fs[2] * c;
  const int32_t pad_begin = static_cast<int32_t>(w[0].pad_begin), pad_end = static_cast<int32_t>(w[0].pad_end);
  const int32_t padded = d + pad_begin + pad_end, out_d = static_cast<int32_t>(w[0].Out());
  const int32_t stride = static_cast<int32_t>(w[0].stride);
  int seq = -1;  // [N, D + pads, Hp*Wp*C]: zero frames at both ends
  if (pad_begin || pad_end) seq = b.Pad(b.Reshape(frames, {n, d, row}), {{0, 0}, {pad_begin, pad_end}, {0, 0}});
  // The frames temporal tap kd reads, one per output frame: [N*D', Hp, Wp, C].
  auto tap_frames = [&](int64_t kd) {
    const int32_t begin = static_cast<int32_t>(kd * w[0].dilation);
    const int32_t end = begin + (out_d - 1) * stride + 1;
    if (seq < 0 && begin == 0 && end == padded && stride == 1) return frames;
    if (seq < 0) seq = b.Reshape(frames, {n, d, row});
    const int t = b.StridedSlice(seq, {0, begin, 0}, {n, end, row}, {1, stride, 1});
    return b.Reshape(t, {n * out_d, fs[1], fs[2], c});
  };
  const std::string name = ctx.node().outputs[0];
  const int64_t taps = weights.shape[2];
  int y = -1;
  if (groups == 1) {
    std::vector<int64_t> all(static_cast<size_t>(taps));
    std::vector<int> stacks;
    for (int64_t kd = 0; kd < taps; ++kd) all[kd] = kd, stacks.push_back(tap_frames(kd));
    const int x = stacks.size() == 1 ? stacks[0] : b.Concatenation(stacks, 3);
    y = EmitConv2D(ctx, x, TemporalTaps(weights, all), bias, 1, padding, plane, name);
  } else {
    const std::vector<float> zeros(static_cast<size_t>(out_channels), 0.0f);
    for (int64_t kd = 0; kd < taps; ++kd) {
      const int part = EmitConv2D(ctx, tap_frames(kd), TemporalTaps(weights, {kd}), kd == 0 ? bias : zeros, groups,
                                  padding, plane, fmt::format("{}/tap{}", name, kd));
      y = y < 0 ? part : b.Add(y, part);
    }
  }
  const auto ys = b.shape(y);  // [N*D', H', W', O]
  ctx.Out(0, b.Reshape(y, {n, out_d, ys[1], ys[2], ys[3]}), kToNdhwc);
}

void Conv(NodeContext& ctx) {
  if (ctx.Rank(0) == 5) return Conv3D(ctx);
  ctx.Const(1);                        // weights must be known at convert time
  npy::Array weights = ToF32(ctx, 1);  // [O, I/g, kH, kW] or [O, I/g, kW]
  SpatialInput in = NhwcInput(ctx, 0);
  if (in.one_d) weights.shape.insert(weights.shape.begin() + 2, 1);
  if (weights.shape.size() != 4) ctx.BadModel("weights are not rank 4");
  const int64_t groups = CheckedGroups(ctx, weights);
  const std::vector<float> bias = ConvBias(ctx, weights.shape[0]);
  std::vector<Window> w = SpatialWindows(ctx, in, {weights.shape[2], weights.shape[3]});
  if (in.one_d) {
    const auto ks = ctx.Ints("kernel_shape", {});
    if (!ks.empty() && ks.size() != 1) ctx.BadModel("kernel_shape does not match a 1-D convolution");
  }
  int x = in.tensor;
  const tfl::Padding padding = PadFor(ctx, x, w);
  const int y = EmitConv2D(ctx, x, weights, bias, groups, padding, w, ctx.node().outputs[0]);
  NhwcOutput(ctx, 0, y, in.one_d);
}

void ConvTranspose(NodeContext& ctx) {
  ctx.Const(1);                        // weights must be known at convert time
  npy::Array weights = ToF32(ctx, 1);  // [C_in, C_out/g, kH, kW]
  SpatialInput in = NhwcInput(ctx, 0);
  if (in.one_d) weights.shape.insert(weights.shape.begin() + 2, 1);
  if (weights.shape.size() != 4) ctx.BadModel("weights are not rank 4");
  const int64_t groups = ctx.Int("group", 1);
  const int64_t channels = ctx.Shape(0)[1];
  if (groups != 1) ctx.Fail("grouped ConvTranspose is not supported");
  if (weights.shape[0] != channels) ctx.BadModel("weights do not match the input channels");
  const int64_t out_channels = weights.shape[1];
  const size_t n = 2;
  Dims strides = ctx.Ints("strides", Dims(in.one_d ? 1 : 2, 1));
  Dims dilations = ctx.Ints("dilations", Dims(in.one_d ? 1 : 2, 1));
  Dims pads = ctx.Ints("pads", Dims(in.one_d ? 2 : 4, 0));
  Dims out_pad = ctx.Ints("output_padding", Dims(in.one_d ? 1 : 2, 0));
  if (in.one_d) {
    strides.insert(strides.begin(), 1);
    dilations.insert(dilations.begin(), 1);
    pads = {0, pads.at(0), 0, pads.at(1)};
    out_pad.insert(out_pad.begin(), 0);
  }
  if (strides.size() != n || dilations.size() != n || pads.size() != 2 * n || out_pad.size() != n)
    ctx.BadModel("strides/dilations/pads/output_padding do not match a 2-D ConvTranspose");
  if (dilations[0] != 1 || dilations[1] != 1) {
    // A dilated kernel is the kernel with (dilation - 1) zeros between taps.
    if (dilations[0] < 1 || dilations[1] < 1) ctx.BadModel("dilations must be >= 1");
    const int64_t kh = weights.shape[2], kw = weights.shape[3];
    const int64_t eh = (kh - 1) * dilations[0] + 1, ew = (kw - 1) * dilations[1] + 1;
    npy::Array d;
    d.dtype = tfl::TensorType_FLOAT32;
    d.shape = {weights.shape[0], weights.shape[1], eh, ew};
    d.data.assign(static_cast<size_t>(NumElements(d.shape)) * 4, 0);
    const int64_t planes = weights.shape[0] * weights.shape[1];
    for (int64_t p = 0; p < planes; ++p)
      for (int64_t i = 0; i < kh; ++i)
        for (int64_t j = 0; j < kw; ++j)
          d.as<float>()[(p * eh + i * dilations[0]) * ew + j * dilations[1]] =
              weights.as<float>()[(p * kh + i) * kw + j];
    weights = std::move(d);
  }
  const Dims kernel = {weights.shape[2], weights.shape[3]};
  Dims full(2), want(2), begin(2);
  const std::string auto_pad = ctx.Str("auto_pad", "NOTSET");
  const bool has_output_shape = ctx.HasAttr("output_shape");
  const Dims output_shape = ctx.Ints("output_shape", {});
  for (size_t i = 0; i < n; ++i) {
    if (strides[i] < 1) ctx.BadModel("strides must be >= 1");
    full[i] = strides[i] * (in.spatial[i] - 1) + kernel[i];
    if (has_output_shape || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      const int64_t target =
          has_output_shape ? output_shape.at(output_shape.size() - n + i) : in.spatial[i] * strides[i];
      const int64_t total = full[i] + out_pad[i] - target;
      // The spec's total/2 is Python's floor division: a negative total
      // (an output larger than the full one) leaves the extra at the end.
      const int64_t half = total >= 0 ? total / 2 : -((1 - total) / 2);
      const int64_t lo = auto_pad == "SAME_UPPER" ? half : total - half;
      begin[i] = lo;
      want[i] = target;
    } else {
      begin[i] = pads[i];
      want[i] = full[i] + out_pad[i] - pads[i] - pads[i + n];
    }
    if (want[i] < 1) ctx.BadModel("the output is empty");
  }
  auto& b = ctx.b();
  const npy::Array f = TransposeHost(weights, {1, 2, 3, 0});
  const std::vector<float> bias = ctx.Has(2) ? ctx.ConstFloats(2) : std::vector<float>(out_channels, 0.0f);
  const auto xs = b.shape(in.tensor);  // a copy: adding tensors moves the builder's storage
  int y = b.TransposeConv(
      in.tensor, b.ConstF32(ctx.node().outputs[0] + "/filter", ToShape32(f.shape), Floats(f)), builder::kNoInput,
      {xs[0], static_cast<int32_t>(full[0]), static_cast<int32_t>(full[1]), static_cast<int32_t>(out_channels)},
      tfl::Padding_VALID, static_cast<int>(strides[1]), static_cast<int>(strides[0]));
  // Crop what the pads remove; output_padding past the full output is zeros.
  builder::Paddings extra = {{0, 0}, {0, 0}, {0, 0}, {0, 0}};
  std::vector<int32_t> sb = {0, 0, 0, 0}, ss = {xs[0], 0, 0, static_cast<int32_t>(out_channels)};
  bool crop = false, pad = false;
  for (size_t i = 0; i < n; ++i) {
    const int64_t lo = std::max<int64_t>(begin[i], 0);
    const int64_t hi = std::min<int64_t>(begin[i] + want[i], full[i]);
    sb[1 + i] = static_cast<int32_t>(lo);
    ss[1 + i] = static_cast<int32_t>(hi - lo);
    crop = crop || lo != 0 || hi != full[i];
    extra[1 + i] = {static_cast<int32_t>(lo - begin[i]), static_cast<int32_t>(begin[i] + want[i] - hi)};
    pad = pad || extra[1 + i][0] != 0 || extra[1 + i][1] != 0;
  }
  if (crop) y = b.Slice(y, sb, ss);
  if (pad) y = b.Pad(y, extra);
  bool any_bias = false;
  for (float v : bias) any_bias = any_bias || v != 0.0f;
  if (any_bias) y = b.Add(y, b.ConstF32(ctx.node().outputs[0] + "/bias", {static_cast<int32_t>(out_channels)}, bias));
  NhwcOutput(ctx, 0, y, in.one_d);
}

}  // namespace

void RegisterConv(Registry& r) {
  r.Add("Conv", Conv);
  r.Add("ConvTranspose", ConvTranspose);
}

}  // namespace gpuclean::onnx::ops
