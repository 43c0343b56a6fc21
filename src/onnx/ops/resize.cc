// Resize (opset 11/13 semantics; Upsample arrives version-converted to it).
//
// Every mode is separable: output index o along an axis reads input indices
// with weights that depend only on o. The mapping is computed here, at
// convert time, with onnxruntime's arithmetic (float coordinates,
// get_original_coordinate, get_nearest_pixel, its bilinear clamp and its
// cubic coefficients), then:
//   - when a TFLite RESIZE_NEAREST_NEIGHBOR / RESIZE_BILINEAR with some
//     (align_corners, half_pixel_centers) computes the same mapping on both
//     spatial axes of a rank-4 NCHW input, that op (in NHWC; GPU-friendly);
//   - otherwise nearest is a GATHER with constant indices per resized axis
//     and linear/cubic is one BATCH_MATMUL (or FULLY_CONNECTED for the
//     innermost stored axis) per resized axis by the constant interpolation
//     matrix, in whatever layout the input is stored;
//   - tf_crop_and_resize adds the extrapolation value where the sampling
//     point falls outside the input (the matrix row is then zero).
#include <fmt/format.h>
#include <array>
#include <cmath>

#include "onnx/ops/ops.h"

namespace gpuclean::onnx::ops {
namespace {

enum class Coord { kHalfPixel, kPytorchHalfPixel, kAlignCorners, kAsymmetric, kTfHalfPixelForNn, kTfCropAndResize };
enum class Mode { kNearest, kLinear, kCubic };
enum class Rounding { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil };

struct Params {
  Mode mode = Mode::kNearest;
  Coord coord = Coord::kHalfPixel;
  Rounding rounding = Rounding::kRoundPreferFloor;
  float cubic_a = -0.75f;
  bool exclude_outside = false;
  float extrapolation = 0.0f;
};

// onnxruntime's get_original_coordinate (all float arithmetic).
float Original(Coord c, float x, float scale, float out, float in, float roi_start, float roi_end) {
  switch (c) {
    case Coord::kHalfPixel: return ((x + 0.5f) / scale) - 0.5f;
    case Coord::kPytorchHalfPixel: return out > 1 ? (x + 0.5f) / scale - 0.5f : 0.0f;
    case Coord::kAlignCorners: return out == 1 ? 0.0f : x * (in - 1) / (out - 1);
    case Coord::kAsymmetric: return x / scale;
    case Coord::kTfHalfPixelForNn: return (x + 0.5f) / scale;
    case Coord::kTfCropAndResize:
      if (out > 1) return roi_start * (in - 1) + (x * (roi_end - roi_start) * (in - 1)) / (out - 1);
      return 0.5f * (roi_start + roi_end) * (in - 1);
  }
  return 0;
}

int64_t NearestPixel(Rounding r, float x) {
  switch (r) {
    case Rounding::kRoundPreferFloor:
      if (x == static_cast<float>(static_cast<int64_t>(x)) + 0.5f) return static_cast<int64_t>(std::floor(x));
      return static_cast<int64_t>(std::round(x));
    case Rounding::kRoundPreferCeil: return static_cast<int64_t>(std::round(x));
    case Rounding::kFloor: return static_cast<int64_t>(std::floor(x));
    case Rounding::kCeil: return static_cast<int64_t>(std::ceil(x));
  }
  return 0;
}

// One axis of the resize: the interpolation matrix [out, in] (row-major),
// the nearest index per output, and which outputs are extrapolated.
struct AxisMap {
  int64_t in = 0, out = 0;
  std::vector<float> matrix;
  std::vector<int32_t> nearest;
  std::vector<bool> outside;
  bool any_outside = false;
  bool identity = false;
};

std::array<float, 4> CubicCoeffs(float s, float a) {
  const float t = std::abs(s);
  return {((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a, ((a + 2) * t - (a + 3)) * t * t + 1,
          ((a + 2) * (1 - t) - (a + 3)) * (1 - t) * (1 - t) + 1,
          ((a * (2 - t) - 5 * a) * (2 - t) + 8 * a) * (2 - t) - 4 * a};
}

AxisMap MapAxis(const Params& p, int64_t in, int64_t out, float scale, float roi_start, float roi_end) {
  AxisMap m;
  m.in = in;
  m.out = out;
  m.matrix.assign(static_cast<size_t>(in * out), 0.0f);
  m.nearest.resize(out);
  m.outside.assign(out, false);
  const bool extrapolate = p.coord == Coord::kTfCropAndResize;
  const float fin = static_cast<float>(in), fout = static_cast<float>(out);
  for (int64_t o = 0; o < out; ++o) {
    float* row = m.matrix.data() + o * in;
    const float x = static_cast<float>(o);
    if (p.mode == Mode::kNearest) {
      // onnxruntime leaves an axis with scale 1 as it is (which matters for
      // tf_half_pixel_for_nn with ceil rounding).
      const float orig = scale == 1.0f && in == out ? x : Original(p.coord, x, scale, fout, fin, roi_start, roi_end);
      if (extrapolate && (orig < 0 || orig > fin - 1)) {
        m.outside[o] = m.any_outside = true;
        m.nearest[o] = 0;
        continue;
      }
      int64_t i = NearestPixel(p.rounding, orig);
      i = std::clamp<int64_t>(i, 0, in - 1);
      m.nearest[o] = static_cast<int32_t>(i);
      row[i] = 1.0f;
      continue;
    }
    // onnxruntime skips the coordinate transform for a scale of exactly 1.
    const float orig = scale == 1.0f ? x : Original(p.coord, x, scale, fout, fin, roi_start, roi_end);
    if (extrapolate && (orig < 0 || orig > fin - 1)) {
      m.outside[o] = m.any_outside = true;
      continue;
    }
    if (p.mode == Mode::kLinear) {
      const float c = std::max(0.0f, std::min(orig, fin - 1));
      const int64_t i1 = std::min(static_cast<int64_t>(c), in - 1);
      const int64_t i2 = std::min(i1 + 1, in - 1);
      float d1 = std::fabs(c - static_cast<float>(i1)), d2 = std::fabs(c - static_cast<float>(i2));
      if (i1 == i2) d1 = d2 = 0.5f;
      row[i1] += d2;
      row[i2] += d1;
    } else {
      const float fl = std::floor(orig);
      const int64_t base = static_cast<int64_t>(fl);
      const auto coeffs = CubicCoeffs(orig - fl, p.cubic_a);
      float sum = 0;
      std::array<float, 4> w = coeffs;
      for (int k = 0; k < 4; ++k) {
        const int64_t idx = base - 1 + k;
        if (p.exclude_outside && (idx < 0 || idx >= in)) w[k] = 0;
        sum += w[k];
      }
      if (!p.exclude_outside) sum = 1.0f;
      for (int k = 0; k < 4; ++k) {
        const int64_t idx = std::clamp<int64_t>(base - 1 + k, 0, in - 1);
        row[idx] += sum == 0 ? 0.0f : w[k] / sum;
      }
    }
  }
  m.identity = in == out && !m.any_outside;
  for (int64_t o = 0; m.identity && o < out; ++o)
    for (int64_t i = 0; i < in; ++i)
      if (m.matrix[o * in + i] != (o == i ? 1.0f : 0.0f)) m.identity = false;
  return m;
}

// LiteRT's RESIZE_NEAREST_NEIGHBOR index rule (see exec/kernels).
std::vector<int32_t> TfliteNearest(int in, int out, bool align, bool half) {
  const float scale = (align && out > 1) ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                                         : static_cast<float>(in) / static_cast<float>(out);
  const float offset = half ? 0.5f : 0.0f;
  std::vector<int32_t> src(out);
  for (int i = 0; i < out; ++i) {
    const float v = (static_cast<float>(i) + offset) * scale;
    int32_t s = static_cast<int32_t>(align ? std::round(v) : std::floor(v));
    s = std::min(s, in - 1);
    if (half) s = std::max(s, 0);
    src[i] = s;
  }
  return src;
}

// LiteRT's RESIZE_BILINEAR weights as a matrix [out, in].
std::vector<float> TfliteBilinear(int in, int out, bool align, bool half) {
  const float scale = (align && out > 1) ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                                         : static_cast<float>(in) / static_cast<float>(out);
  std::vector<float> m(static_cast<size_t>(in) * out, 0.0f);
  for (int i = 0; i < out; ++i) {
    const float src = half ? (static_cast<float>(i) + 0.5f) * scale - 0.5f : static_cast<float>(i) * scale;
    const int lo = std::max(static_cast<int32_t>(std::floor(src)), 0);
    const int hi = std::min(static_cast<int32_t>(std::ceil(src)), in - 1);
    const float frac = src - static_cast<float>(lo);
    m[static_cast<size_t>(i) * in + lo] += 1 - frac;
    m[static_cast<size_t>(i) * in + hi] += frac;
  }
  return m;
}

bool Close(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::fabs(a[i] - b[i]) > 2e-6f) return false;
  return true;
}

Params ParseParams(NodeContext& ctx) {
  Params p;
  const std::string mode = ctx.Str("mode", "nearest");
  if (mode == "nearest")
    p.mode = Mode::kNearest;
  else if (mode == "linear" || mode == "bilinear")
    p.mode = Mode::kLinear;
  else if (mode == "cubic" || mode == "bicubic")
    p.mode = Mode::kCubic;
  else
    ctx.BadModel(fmt::format("unknown mode '{}'", mode));
  const std::string coord = ctx.Str("coordinate_transformation_mode", "half_pixel");
  if (coord == "half_pixel")
    p.coord = Coord::kHalfPixel;
  else if (coord == "pytorch_half_pixel")
    p.coord = Coord::kPytorchHalfPixel;
  else if (coord == "align_corners")
    p.coord = Coord::kAlignCorners;
  else if (coord == "asymmetric")
    p.coord = Coord::kAsymmetric;
  else if (coord == "tf_half_pixel_for_nn")
    p.coord = Coord::kTfHalfPixelForNn;
  else if (coord == "tf_crop_and_resize")
    p.coord = Coord::kTfCropAndResize;
  else
    ctx.Fail(fmt::format("coordinate_transformation_mode '{}' is not supported", coord));
  const std::string nm = ctx.Str("nearest_mode", "round_prefer_floor");
  if (nm == "round_prefer_floor")
    p.rounding = Rounding::kRoundPreferFloor;
  else if (nm == "round_prefer_ceil")
    p.rounding = Rounding::kRoundPreferCeil;
  else if (nm == "floor")
    p.rounding = Rounding::kFloor;
  else if (nm == "ceil")
    p.rounding = Rounding::kCeil;
  else
    ctx.BadModel(fmt::format("unknown nearest_mode '{}'", nm));
  p.cubic_a = ctx.Float("cubic_coeff_a", -0.75f);
  p.exclude_outside = ctx.Int("exclude_outside", 0) != 0;
  p.extrapolation = ctx.Float("extrapolation_value", 0.0f);
  if (ctx.Int("antialias", 0) != 0) ctx.Fail("antialias is not supported");
  if (ctx.HasAttr("axes")) ctx.Fail("the axes attribute (opset 18) is not supported");
  if (ctx.Str("keep_aspect_ratio_policy", "stretch") != "stretch")
    ctx.Fail("keep_aspect_ratio_policy is not supported");
  return p;
}

// Interpolation along stored axis `s` of `x` by the matrix [out, in]:
// FULLY_CONNECTED when the axis is innermost, BATCH_MATMUL otherwise.
int ApplyMatrix(NodeContext& ctx, int x, int s, const AxisMap& m) {
  auto& b = ctx.b();
  const Shape32 shape = b.shape(x);
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < s; ++i) outer *= shape[i];
  for (size_t i = s + 1; i < shape.size(); ++i) inner *= shape[i];
  const int32_t in = static_cast<int32_t>(m.in), out = static_cast<int32_t>(m.out);
  Shape32 result = shape;
  result[s] = out;
  int y;
  if (inner == 1) {
    const int w = ctx.ConstF32({m.out, m.in}, m.matrix);
    y = b.FullyConnected(b.Reshape(x, {static_cast<int32_t>(outer), in}), w, builder::kNoInput);
  } else if (outer == 1) {
    const int w = ctx.ConstF32({m.out, m.in}, m.matrix);
    y = b.BatchMatMul(w, b.Reshape(x, {in, static_cast<int32_t>(inner)}));
  } else {
    const int w = ctx.ConstF32({1, m.out, m.in}, m.matrix);
    y = b.BatchMatMul(w, b.Reshape(x, {static_cast<int32_t>(outer), in, static_cast<int32_t>(inner)}));
  }
  y = b.Reshape(y, result);
  if (m.any_outside) {
    // Rows sampling outside the input are zero; add the extrapolation value.
    Dims bias_shape(result.size(), 1);
    bias_shape[s] = m.out;
    std::vector<float> bias(m.out);
    for (int64_t o = 0; o < m.out; ++o) bias[o] = m.outside[o] ? ctx.Float("extrapolation_value", 0.0f) : 0.0f;
    y = b.Add(y, ctx.ConstF32(bias_shape, bias));
  }
  return y;
}

void Resize(NodeContext& ctx) {
  const Params p = ParseParams(ctx);
  const Dims& in = ctx.Shape(0);
  const int rank = static_cast<int>(in.size());
  // Opset 10 Resize: (X, scales); 11+: (X, roi, scales, sizes).
  const bool v10 = ctx.num_inputs() == 2;
  const int scales_input = v10 ? 1 : 2, sizes_input = 3;
  std::vector<float> scales;
  Dims out(in);
  if (ctx.Has(sizes_input) && NumElements(ctx.Shape(sizes_input)) > 0) {
    const auto sizes = ctx.ConstInts(sizes_input);
    if (static_cast<int>(sizes.size()) != rank) ctx.BadModel("sizes do not match the input rank");
    for (int i = 0; i < rank; ++i) {
      out[i] = sizes[i];
      scales.push_back(static_cast<float>(sizes[i]) / static_cast<float>(in[i]));
    }
  } else if (ctx.Has(scales_input) && NumElements(ctx.Shape(scales_input)) > 0) {
    scales = ctx.ConstFloats(scales_input);
    if (static_cast<int>(scales.size()) != rank) ctx.BadModel("scales do not match the input rank");
    for (int i = 0; i < rank; ++i) {
      if (!(scales[i] > 0)) ctx.BadModel("scales must be positive");
      out[i] = static_cast<int64_t>(std::floor(static_cast<float>(in[i]) * scales[i]));
    }
  } else {
    ctx.BadModel("neither scales nor sizes is given");
  }
  for (int64_t d : out)
    if (d < 1) ctx.Fail("the output would be empty");
  std::vector<float> roi(2 * rank, 0.0f);
  for (int i = 0; i < rank; ++i) roi[rank + i] = 1.0f;
  if (p.coord == Coord::kTfCropAndResize) {
    if (!ctx.Has(1) || NumElements(ctx.Shape(1)) != 2 * rank)
      ctx.BadModel("tf_crop_and_resize needs a roi of 2 * rank values");
    roi = ctx.ConstFloats(1);
  }
  const bool is_float = ctx.DType(0) == tfl::TensorType_FLOAT32;
  if (p.mode != Mode::kNearest && !is_float)
    ctx.Fail("linear and cubic resizes of non-float tensors are not supported");
  std::vector<AxisMap> maps(rank);
  bool any_outside = false;
  for (int i = 0; i < rank; ++i) {
    maps[i] = MapAxis(p, in[i], out[i], scales[i], roi[i], roi[rank + i]);
    any_outside = any_outside || maps[i].any_outside;
  }
  if (any_outside && !is_float) ctx.Fail("extrapolation of non-float tensors is not supported");
  auto& b = ctx.b();

  // A TFLite resize op when it computes the same mapping.
  if (rank == 4 && maps[0].identity && maps[1].identity && !any_outside && p.mode != Mode::kCubic) {
    const int ih = static_cast<int>(in[2]), iw = static_cast<int>(in[3]);
    const int oh = static_cast<int>(out[2]), ow = static_cast<int>(out[3]);
    for (const auto& [align, half] : {std::pair{false, true}, std::pair{false, false}, std::pair{true, false}}) {
      bool same;
      if (p.mode == Mode::kNearest) {
        same = TfliteNearest(ih, oh, align, half) == maps[2].nearest &&
               TfliteNearest(iw, ow, align, half) == maps[3].nearest;
      } else {
        same = Close(TfliteBilinear(ih, oh, align, half), maps[2].matrix) &&
               Close(TfliteBilinear(iw, ow, align, half), maps[3].matrix);
      }
      if (!same) continue;
      const int x = ctx.TensorIn(0, kToNhwc);
      const int y = p.mode == Mode::kNearest ? b.ResizeNearestNeighbor(x, oh, ow, align, half)
                                             : b.ResizeBilinear(x, oh, ow, align, half);
      ctx.Out(0, y, kToNhwc);
      return;
    }
  }

  // Axis by axis in the stored layout.
  const Perm perm = ctx.PermOf(0);
  int x = ctx.TensorIn(0, perm);
  bool changed = false;
  for (int a = 0; a < rank; ++a) {
    if (maps[a].identity) continue;
    changed = true;
    const int s = StoredAxis(perm, a);
    if (p.mode == Mode::kNearest && !maps[a].any_outside) {
      x = b.Gather(x, ctx.ConstI32({maps[a].out}, maps[a].nearest), s);
    } else {
      x = ApplyMatrix(ctx, x, s, maps[a]);
    }
  }
  if (!changed) x = b.Reshape(x, b.shape(x));
  ctx.Out(0, x, perm);
}

}  // namespace

void RegisterResize(Registry& r) { r.Add("Resize", Resize); }

}  // namespace gpuclean::onnx::ops
