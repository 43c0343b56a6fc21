// RESIZE_BILINEAR: NHWC float32 to the output's height and width (the size
// input is already in the output shape). LiteRT's rule (reference
// ResizeBilinear / ComputeInterpolationValues):
//   scale = align_corners && out > 1 ? (in-1)/(out-1) : in/out
//   src   = half_pixel_centers ? (dst + 0.5)*scale - 0.5 : dst*scale
//   lo = max(floor(src), 0), hi = min(ceil(src), in-1), frac = src - lo
//   out = v(lo)*(1-frac) + v(hi)*frac, separably in y then x.
#include <cmath>
#include <vector>

#include "exec/kernels/conv_util.h"

namespace gpuclean::exec::kernels {
namespace {

struct Axis {
  std::vector<int32_t> lo, hi;
  std::vector<float> frac;
};

Axis Interpolation(int in, int out, bool align_corners, bool half_pixel_centers) {
  const float scale = (align_corners && out > 1) ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                                                 : static_cast<float>(in) / static_cast<float>(out);
  Axis a;
  a.lo.resize(out);
  a.hi.resize(out);
  a.frac.resize(out);
  for (int i = 0; i < out; ++i) {
    const float src =
        half_pixel_centers ? (static_cast<float>(i) + 0.5f) * scale - 0.5f : static_cast<float>(i) * scale;
    const float fl = std::floor(src);
    a.lo[i] = std::max(static_cast<int32_t>(fl), 0);
    a.hi[i] = std::min(static_cast<int32_t>(std::ceil(src)), in - 1);
    a.frac[i] = src - static_cast<float>(a.lo[i]);
  }
  return a;
}

struct Args {
  const float* in;
  float* out;
  int in_h, in_w, c, out_h, out_w;
  const Axis* ay;
  const Axis* ax;
};

GPUCLEAN_CONV_INLINE void RowsResizeBilinear(const Args& a, int64_t r0, int64_t r1) {
  const int c = a.c;
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t b = r / a.out_h;
    const int y = static_cast<int>(r % a.out_h);
    const float dy = a.ay->frac[y];
    const float* row0 = a.in + (b * a.in_h + a.ay->lo[y]) * a.in_w * c;
    const float* row1 = a.in + (b * a.in_h + a.ay->hi[y]) * a.in_w * c;
    float* __restrict o = a.out + r * a.out_w * c;
    for (int x = 0; x < a.out_w; ++x) {
      const float dx = a.ax->frac[x];
      const float* __restrict p00 = row0 + static_cast<int64_t>(a.ax->lo[x]) * c;
      const float* __restrict p01 = row0 + static_cast<int64_t>(a.ax->hi[x]) * c;
      const float* __restrict p10 = row1 + static_cast<int64_t>(a.ax->lo[x]) * c;
      const float* __restrict p11 = row1 + static_cast<int64_t>(a.ax->hi[x]) * c;
      const float w00 = (1 - dy) * (1 - dx), w01 = (1 - dy) * dx, w10 = dy * (1 - dx), w11 = dy * dx;
      for (int i = 0; i < c; ++i) o[x * c + i] = p00[i] * w00 + p10[i] * w10 + p01[i] * w01 + p11[i] * w11;
    }
  }
}

GPUCLEAN_CONV_HOT void RowsGeneric(const Args& a, int64_t r0, int64_t r1) { RowsResizeBilinear(a, r0, r1); }
#if GPUCLEAN_CONV_X86
GPUCLEAN_TARGET_AVX2 void RowsAvx2(const Args& a, int64_t r0, int64_t r1) { RowsResizeBilinear(a, r0, r1); }
GPUCLEAN_TARGET_AVX512 void RowsAvx512(const Args& a, int64_t r0, int64_t r1) { RowsResizeBilinear(a, r0, r1); }
#endif

void CheckResizeBilinear(const ir::Subgraph& graph, const ir::Op& op) {
  for (int32_t t : {op.inputs.at(0), op.outputs.at(0)})
    if (graph.tensors[t].dtype != tfl::TensorType_FLOAT32) ThrowUnsupportedDtype(graph, op, graph.tensors[t].dtype);
  if (conv::InputRank(graph, op, 0) != 4) conv::ThrowBadInput(graph, op, "input must have rank 4");
}

void EvalResizeBilinear(KernelContext& ctx) {
  const auto* o = ctx.op.options.AsResizeBilinearOptions();
  // Both flags set: TFLite's builtin kernel refuses the op
  // (tflite/kernels/resize_bilinear.cc:92 @ v2.2.0), but the XNNPACK delegate
  // that takes it first on the CPU aligns corners and ignores
  // half_pixel_centers (tflite/delegates/xnnpack/xnnpack_delegate.cc:5796),
  // and so does LiteRT.js (measured, resize_bilinear_test.cc).
  const bool align = o && o->align_corners, half = o && o->half_pixel_centers && !align;
  const Tensor& in = ctx.input(0);
  Tensor& out = ctx.output(0);
  if (out.num_elements() == 0) return;
  const Axis ay = Interpolation(in.dim(1), out.dim(1), align, half);
  const Axis ax = Interpolation(in.dim(2), out.dim(2), align, half);
  const Args a{in.as<float>(), out.as<float>(), in.dim(1), in.dim(2), in.dim(3), out.dim(1), out.dim(2), &ay, &ax};
  void (*run)(const Args&, int64_t, int64_t) = RowsGeneric;
#if GPUCLEAN_CONV_X86
  if (conv::ActiveIsa() == conv::Isa::kAvx512) run = RowsAvx512;
  if (conv::ActiveIsa() == conv::Isa::kAvx2) run = RowsAvx2;
#endif
  const int64_t rows = static_cast<int64_t>(in.dim(0)) * a.out_h;
  ctx.pool.ParallelFor(rows, conv::GrainFor(rows, static_cast<int64_t>(a.out_w) * a.c * 4),
                       [&](int64_t r0, int64_t r1) { run(a, r0, r1); });
}

}  // namespace

Kernel ResizeBilinearKernel() { return {CheckResizeBilinear, EvalResizeBilinear}; }

}  // namespace gpuclean::exec::kernels
