// Mask upsampling: bilinear resize over the last two axes with LiteRT's
// RESIZE_BILINEAR rule, so a host-side upsample reads the same as the graph
// op it replaces:
//   scale = align_corners && out > 1 ? (in-1)/(out-1) : in/out
//   src   = half_pixel_centers ? (dst + 0.5)*scale - 0.5 : dst*scale
//   lo = max(floor(src), 0), hi = min(ceil(src), in-1), frac = src - lo
#include <algorithm>
#include <cmath>

#include "gpuclean/host_steps.h"
#include "pipeline/steps/step_util.h"

namespace gpuclean::pipeline {
using steps::Fail;

namespace {

struct Taps {
  std::vector<int64_t> lo, hi;
  std::vector<float> frac;
};

Taps AxisTaps(int64_t in, int64_t out, bool align_corners, bool half_pixel_centers) {
  const float scale = (align_corners && out > 1) ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                                                 : static_cast<float>(in) / static_cast<float>(out);
  Taps t;
  for (int64_t i = 0; i < out; ++i) {
    const float src =
        half_pixel_centers ? (static_cast<float>(i) + 0.5f) * scale - 0.5f : static_cast<float>(i) * scale;
    const int64_t lo = std::max<int64_t>(static_cast<int64_t>(std::floor(src)), 0);
    t.lo.push_back(std::min(lo, in - 1));
    t.hi.push_back(std::min(static_cast<int64_t>(std::ceil(src)), in - 1));
    t.frac.push_back(src - static_cast<float>(lo));
  }
  return t;
}

}  // namespace

npy::Array ResizeBilinear(const npy::Array& masks, int64_t out_h, int64_t out_w, bool align_corners,
                          bool half_pixel_centers) {
  steps::RequireWellFormed("resize_bilinear", masks, "masks");
  steps::RequireFloat("resize_bilinear", masks, "masks");
  const size_t rank = masks.shape.size();
  if (rank < 2) Fail("resize_bilinear", "masks {} need two spatial axes", steps::ShapeText(masks.shape));
  if (out_h <= 0 || out_w <= 0) Fail("resize_bilinear", "output size {}x{} must be positive", out_h, out_w);
  if (align_corners && half_pixel_centers)
    Fail("resize_bilinear", "align_corners and half_pixel_centers cannot both be set (LiteRT refuses it)");
  const int64_t in_h = masks.shape[rank - 2], in_w = masks.shape[rank - 1];
  std::vector<int64_t> shape = masks.shape;
  shape[rank - 2] = out_h;
  shape[rank - 1] = out_w;
  npy::Array out = steps::MakeArray(masks.dtype, shape);
  if (in_h == 0 || in_w == 0 || out.num_elements() == 0) return out;
  const Taps ty = AxisTaps(in_h, out_h, align_corners, half_pixel_centers);
  const Taps tx = AxisTaps(in_w, out_w, align_corners, half_pixel_centers);
  const int64_t planes = steps::Product(masks.shape, 0, rank - 2);
  for (int64_t p = 0; p < planes; ++p) {
    const float* in = masks.as<float>() + p * in_h * in_w;
    float* o = out.as<float>() + p * out_h * out_w;
    for (int64_t y = 0; y < out_h; ++y) {
      const float dy = ty.frac[y];
      const float* r0 = in + ty.lo[y] * in_w;
      const float* r1 = in + ty.hi[y] * in_w;
      for (int64_t x = 0; x < out_w; ++x) {
        const float dx = tx.frac[x];
        // The interpreter's term order, so both round alike.
        o[y * out_w + x] = r0[tx.lo[x]] * ((1 - dy) * (1 - dx)) + r1[tx.lo[x]] * (dy * (1 - dx)) +
                           r0[tx.hi[x]] * ((1 - dy) * dx) + r1[tx.hi[x]] * (dy * dx);
      }
    }
  }
  return out;
}

}  // namespace gpuclean::pipeline
