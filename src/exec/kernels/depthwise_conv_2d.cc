// DEPTHWISE_CONV_2D: NHWC input [N, H, W, C], filter [1, KH, KW, C * M],
// optional bias [C * M]; output channel c*M + m reads input channel c. The
// multiplier M follows from the shapes (LiteRT checks the option against
// them; we do not need it). SAME/VALID padding, strides, dilations, fused
// activation clamp.
//
// The inner loop runs over channels (NHWC keeps them contiguous): a vector
// of L channels accumulates the KH x KW taps of one output pixel. For 3x3
// and 5x5 filters the taps' weights stay in registers across a whole output
// row; windows that cross the border take a checked path.
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "exec/kernels/conv_util.h"
#include "exec/kernels/fp16_compute.h"
#include "gpuclean/shapes.h"

#if defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wpsabi"  // vectors only cross inlined helpers
#endif

namespace gpuclean::exec::kernels {
namespace {

using conv::LoadU;
using conv::StoreU;
using conv::Vec;

struct DwArgs {
  const float* in = nullptr;
  const float* w = nullptr;
  const float* bias = nullptr;
  float* out = nullptr;
  int h = 0, w_ = 0, c = 0;  // c: output channels (= input channels, after expanding the multiplier)
  int oh = 0, ow = 0, kh = 0, kw = 0, sh = 1, sw = 1, dh = 1, dw = 1, pt = 0, pl = 0;
  float lo = 0, hi = 0;
  // fp16-compute with the binary16 FMA instruction: in and w as binary16.
  const uint16_t* in_half = nullptr;
  const uint16_t* w_half = nullptr;
};

// One output pixel whose window may cross the border: taps are checked.
template <int L>
GPUCLEAN_CONV_INLINE void DwChecked(const DwArgs& a, const float* in_b, const float* wc, float* out_row,
                                    const Vec<L>& vb, const Vec<L>& vlo, const Vec<L>& vhi, int iy0, int ky0, int ky1,
                                    int kw, int ox) {
  const int64_t c = a.c;
  Vec<L> acc = vb;
  const int ix0 = ox * a.sw - a.pl;
  for (int ky = ky0; ky < ky1; ++ky) {
    const float* row = in_b + static_cast<int64_t>(iy0 + ky * a.dh) * a.w_ * c;
    for (int kx = 0; kx < kw; ++kx) {
      const int ix = ix0 + kx * a.dw;
      if (ix < 0 || ix >= a.w_) continue;
      acc += LoadU<L>(row + ix * c) * LoadU<L>(wc + (ky * kw + kx) * c);
    }
  }
  StoreU<L>(out_row + ox * c, conv::Min<L>(conv::Max<L>(acc, vlo), vhi));
}

// Output row (b, oy), channels [c0, c0 + L). KH = KW = 0: filter size at run time.
template <int L, int KH, int KW>
GPUCLEAN_CONV_INLINE void DwBlock(const DwArgs& a, int b, int oy, int c0) {
  using V = Vec<L>;
  constexpr int kTaps = KH * KW;
  const int kh = KH ? KH : a.kh, kw = KW ? KW : a.kw;
  const int64_t c = a.c;
  V wreg[kTaps > 0 ? kTaps : 1];
  if constexpr (kTaps > 0) {
#pragma GCC unroll 32
    for (int t = 0; t < kTaps; ++t) wreg[t] = LoadU<L>(a.w + t * c + c0);
  }
  const V vb = a.bias ? LoadU<L>(a.bias + c0) : V{};
  const V vlo = conv::Splat<L>(a.lo), vhi = conv::Splat<L>(a.hi);
  const int iy0 = oy * a.sh - a.pt;
  int ky0 = 0, ky1 = kh;
  while (ky0 < kh && iy0 + ky0 * a.dh < 0) ++ky0;
  while (ky1 > ky0 && iy0 + (ky1 - 1) * a.dh >= a.h) --ky1;
  const bool rows_full = ky0 == 0 && ky1 == kh;
  // Output columns whose whole window lies inside the input.
  const int ox_lo = std::min(a.ow, (a.pl + a.sw - 1) / a.sw);
  const int last = a.w_ - 1 + a.pl - (kw - 1) * a.dw;
  const int ox_hi = last < 0 ? 0 : std::min(a.ow, last / a.sw + 1);
  const float* in_b = a.in + static_cast<int64_t>(b) * a.h * a.w_ * c + c0;
  const float* wc = a.w + c0;
  float* out_row = a.out + (static_cast<int64_t>(b) * a.oh + oy) * a.ow * c + c0;

  if (!rows_full || ox_lo >= ox_hi) {
    for (int ox = 0; ox < a.ow; ++ox) DwChecked<L>(a, in_b, wc, out_row, vb, vlo, vhi, iy0, ky0, ky1, kw, ox);
    return;
  }
  for (int ox = 0; ox < ox_lo; ++ox) DwChecked<L>(a, in_b, wc, out_row, vb, vlo, vhi, iy0, ky0, ky1, kw, ox);
  const float* row0 = in_b + static_cast<int64_t>(iy0) * a.w_ * c;
  const int64_t ky_step = static_cast<int64_t>(a.dh) * a.w_ * c, kx_step = static_cast<int64_t>(a.dw) * c;
  for (int ox = ox_lo; ox < ox_hi; ++ox) {
    const float* p = row0 + static_cast<int64_t>(ox * a.sw - a.pl) * c;
    // The accumulation: taps in row-major (ky, kx) order.
    V acc = vb;
    if constexpr (kTaps > 0) {
#pragma GCC unroll 8
      for (int ky = 0; ky < KH; ++ky)
#pragma GCC unroll 8
        for (int kx = 0; kx < KW; ++kx) acc += LoadU<L>(p + ky * ky_step + kx * kx_step) * wreg[ky * KW + kx];
    } else {
      for (int ky = 0; ky < kh; ++ky)
        for (int kx = 0; kx < kw; ++kx)
          acc += LoadU<L>(p + ky * ky_step + kx * kx_step) * LoadU<L>(wc + (ky * kw + kx) * c);
    }
    StoreU<L>(out_row + ox * c, conv::Min<L>(conv::Max<L>(acc, vlo), vhi));
  }
  for (int ox = ox_hi; ox < a.ow; ++ox) DwChecked<L>(a, in_b, wc, out_row, vb, vlo, vhi, iy0, ky0, ky1, kw, ox);
}

// Channels in blocks of L, then L/2, ... 1 for the remainder.
template <int L, int KH, int KW>
GPUCLEAN_CONV_INLINE void DwChannels(const DwArgs& a, int b, int oy, int c0) {
  if constexpr (L == 1) {
    for (; c0 < a.c; ++c0) DwBlock<1, KH, KW>(a, b, oy, c0);
  } else {
    if (c0 + L <= a.c) {
      DwBlock<L, KH, KW>(a, b, oy, c0);
      c0 += L;
    }
    DwChannels<L / 2, KH, KW>(a, b, oy, c0);
  }
}

template <int L, int KH, int KW>
GPUCLEAN_CONV_INLINE void DwRow(const DwArgs& a, int b, int oy) {
  int c0 = 0;
  for (; c0 + L <= a.c; c0 += L) DwBlock<L, KH, KW>(a, b, oy, c0);
  DwChannels<L / 2, KH, KW>(a, b, oy, c0);
}

template <int L>
GPUCLEAN_CONV_INLINE void DwRows(const DwArgs& a, int64_t r0, int64_t r1) {
  for (int64_t r = r0; r < r1; ++r) {
    const int b = static_cast<int>(r / a.oh), oy = static_cast<int>(r % a.oh);
    if (a.kh == 3 && a.kw == 3)
      DwRow<L, 3, 3>(a, b, oy);
    else if (a.kh == 5 && a.kw == 5)
      DwRow<L, 5, 5>(a, b, oy);
    else
      DwRow<L, 0, 0>(a, b, oy);
  }
}

GPUCLEAN_CONV_HOT void DwRowsGeneric(const DwArgs& a, int64_t r0, int64_t r1) { DwRows<4>(a, r0, r1); }
#if GPUCLEAN_CONV_X86
GPUCLEAN_TARGET_AVX2 void DwRowsAvx2(const DwArgs& a, int64_t r0, int64_t r1) { DwRows<8>(a, r0, r1); }
GPUCLEAN_TARGET_AVX512 void DwRowsAvx512(const DwArgs& a, int64_t r0, int64_t r1) { DwRows<16>(a, r0, r1); }
#endif

GPUCLEAN_CONV_HOT void ExpandMultiplier(const float* in, int64_t pixels, int c, int m, float* out) {
  for (int64_t p = 0; p < pixels; ++p)
    for (int i = 0; i < c; ++i)
      for (int j = 0; j < m; ++j) out[(p * c + i) * m + j] = in[p * c + i];
}

void CheckDepthwiseConv2d(const ir::Subgraph& graph, const ir::Op& op) {
  conv::RequireFloat32(graph, op);
  const auto* o = op.options.AsDepthwiseConv2DOptions();
  if (!o) conv::ThrowBadInput(graph, op, "missing DepthwiseConv2DOptions");
  if (conv::InputRank(graph, op, 0) != 4 || conv::InputRank(graph, op, 1) != 4)
    conv::ThrowUnsupportedAttr(graph, op, "input or filter of rank other than 4");
  if (conv::InputRank(graph, op, 2) > 1) conv::ThrowBadInput(graph, op, "bias must have rank 1");
  if (o->stride_w <= 0 || o->stride_h <= 0 || o->dilation_w_factor <= 0 || o->dilation_h_factor <= 0)
    conv::ThrowBadInput(graph, op, "strides and dilations must be positive");
  const auto& in = graph.tensors[op.inputs[0]].shape;
  const auto& w = graph.tensors[op.inputs[1]].shape;
  if (w[0] != 1 || in[3] <= 0 || w[3] % in[3] != 0)
    conv::ThrowBadInput(graph, op, fmt::format("filter {} does not fit input depth {}", ir::FormatShape(w), in[3]));
}

// fp16-compute: each output channel's taps accumulated in half precision,
// (ky, kx) order, bias last (fp16_compute.h); channels side by side.
void DwRowsFp16(const DwArgs& a, int64_t r0, int64_t r1) {
  const conv::Clamp clamp{a.lo, a.hi};
  const fp16::DepthwiseTapsFn taps = fp16::DepthwiseTaps();
  std::vector<float> acc(a.c);
  const size_t window = static_cast<size_t>(a.kh) * a.kw;
  std::vector<const float*> xs(window), ws(window);
  std::vector<const uint16_t*> xh(window), wh(window);
  // Blocks of four interior pixels: their taps share the weights.
  const fp16::DepthwiseTapsFn taps4 = fp16::DepthwiseTaps4();
  std::vector<float> acc4(static_cast<size_t>(4) * a.c);
  std::vector<const float*> xs4(4 * window), ws4(window);
  std::vector<const uint16_t*> xh4(a.in_half ? 4 * window : 0), wh4(a.in_half ? window : 0);
  for (size_t t = 0; t < window; ++t) {
    ws4[t] = a.w + static_cast<int64_t>(t) * a.c;
    if (a.in_half) wh4[t] = a.w_half + static_cast<int64_t>(t) * a.c;
  }
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t b = r / a.oh;
    const int oy = static_cast<int>(r % a.oh);
    // Rows whose window lies inside vertically: four interior pixels at a
    // time (every tap inside) share the weights and run as one block.
    const bool rows_inside = oy * a.sh - a.pt >= 0 && oy * a.sh - a.pt + (a.kh - 1) * a.dh < a.h;
    for (int ox = 0; ox < a.ow;) {
      const bool block =
          rows_inside && ox + 4 <= a.ow && ox * a.sw - a.pl >= 0 && (ox + 3) * a.sw - a.pl + (a.kw - 1) * a.dw < a.w_;
      if (block) {
        for (int p = 0; p < 4; ++p)
          for (int ky = 0, t = 0; ky < a.kh; ++ky)
            for (int kx = 0; kx < a.kw; ++kx, ++t) {
              const int iy = oy * a.sh - a.pt + ky * a.dh, ix = (ox + p) * a.sw - a.pl + kx * a.dw;
              const int64_t at = ((b * a.h + iy) * a.w_ + ix) * a.c;
              if (a.in_half)
                xh4[p * window + t] = a.in_half + at;
              else
                xs4[p * window + t] = a.in + at;
            }
        if (a.in_half)
          fp16::DepthwiseTapsHalf4(xh4.data(), wh4.data(), static_cast<int>(window), a.c, acc4.data());
        else
          taps4(xs4.data(), ws4.data(), static_cast<int>(window), a.c, acc4.data());
        std::copy(acc4.begin(), acc4.end(), a.out + (r * a.ow + ox) * a.c);
        ox += 4;
        continue;
      }
      // The taps inside the input, in (ky, kx) order; padding adds nothing.
      int n = 0;
      for (int ky = 0; ky < a.kh; ++ky) {
        const int iy = oy * a.sh - a.pt + ky * a.dh;
        if (iy < 0 || iy >= a.h) continue;
        for (int kx = 0; kx < a.kw; ++kx) {
          const int ix = ox * a.sw - a.pl + kx * a.dw;
          if (ix < 0 || ix >= a.w_) continue;
          const int64_t at = ((b * a.h + iy) * a.w_ + ix) * a.c, wat = (ky * a.kw + kx) * a.c;
          if (a.in_half)
            xh[n] = a.in_half + at, wh[n] = a.w_half + wat;
          else
            xs[n] = a.in + at, ws[n] = a.w + wat;
          ++n;
        }
      }
      if (a.in_half)
        fp16::DepthwiseTapsHalf(xh.data(), wh.data(), n, a.c, acc.data());
      else
        taps(xs.data(), ws.data(), n, a.c, acc.data());
      std::copy(acc.begin(), acc.end(), a.out + (r * a.ow + ox) * a.c);
      ++ox;
    }
  }
  fp16::FinishRows(a.out + r0 * a.ow * a.c, (r1 - r0) * a.ow, a.c, a.c, a.bias, clamp);
}

void EvalDepthwiseConv2d(KernelContext& ctx) {
  const auto& o = *ctx.op.options.AsDepthwiseConv2DOptions();
  const Tensor& in = ctx.input(0);
  const Tensor& w = ctx.input(1);
  Tensor& out = ctx.output(0);
  if (out.num_elements() == 0) return;
  DwArgs a;
  const int batch = in.dim(0);
  a.h = in.dim(1);
  a.w_ = in.dim(2);
  const int cin = in.dim(3);
  a.c = w.dim(3);
  a.kh = w.dim(1);
  a.kw = w.dim(2);
  a.oh = out.dim(1);
  a.ow = out.dim(2);
  a.sh = o.stride_h;
  a.sw = o.stride_w;
  a.dh = o.dilation_h_factor;
  a.dw = o.dilation_w_factor;
  const auto& pad = ctx.input_pad;  // a skipped PAD (conv_2d.cc)
  a.pt = pad[0] + conv::PaddingBefore(a.h + pad[0] + pad[1], a.kh, a.sh, a.dh, a.oh);
  a.pl = pad[2] + conv::PaddingBefore(a.w_ + pad[2] + pad[3], a.kw, a.sw, a.dw, a.ow);
  const conv::Clamp clamp = conv::ActivationClamp(o.fused_activation_function);
  a.lo = clamp.lo;
  a.hi = clamp.hi;
  a.w = w.as<float>();
  a.bias = ctx.has_input(2) ? ctx.input(2).as<float>() : nullptr;
  a.out = out.as<float>();
  if (!fp16::DotProductsInHalf(ctx)) {
    conv::ConvGeometry g;
    g.batch = batch;
    g.in_h = a.h;
    g.in_w = a.w_;
    g.in_pixel_stride = cin;
    g.in_c = cin;
    g.out_h = a.oh;
    g.out_w = a.ow;
    g.kh = a.kh;
    g.kw = a.kw;
    g.stride_h = a.sh;
    g.stride_w = a.sw;
    g.dil_h = a.dh;
    g.dil_w = a.dw;
    g.pad_top = a.pt;
    g.pad_left = a.pl;
    if (conv::OneDnnDepthwiseConv2D(ctx, g, a.c, a.w, a.bias, clamp, a.out)) return;
  }
  std::vector<float> expanded;
  a.in = in.as<float>();
  if (a.c != cin) {
    const int64_t pixels = static_cast<int64_t>(batch) * a.h * a.w_;
    expanded.resize(static_cast<size_t>(pixels) * a.c);
    ExpandMultiplier(in.as<float>(), pixels, cin, a.c / cin, expanded.data());
    a.in = expanded.data();
  }
  void (*run)(const DwArgs&, int64_t, int64_t) = DwRowsGeneric;
#if GPUCLEAN_CONV_X86
  if (conv::ActiveIsa() == conv::Isa::kAvx512) run = DwRowsAvx512;
  if (conv::ActiveIsa() == conv::Isa::kAvx2) run = DwRowsAvx2;
#endif
  std::vector<uint16_t> in_half, w_half;
  if (fp16::DotProductsInHalf(ctx)) {
    run = DwRowsFp16;
    if (fp16::NativeFma()) {
      in_half.resize(static_cast<size_t>(batch) * a.h * a.w_ * a.c);
      w_half.resize(static_cast<size_t>(a.kh) * a.kw * a.c);
      fp16::ToHalfBits(a.in, in_half.data(), static_cast<int64_t>(in_half.size()));
      fp16::ToHalfBits(a.w, w_half.data(), static_cast<int64_t>(w_half.size()));
      a.in_half = in_half.data();
      a.w_half = w_half.data();
    }
  }
  const int64_t rows = static_cast<int64_t>(batch) * a.oh;
  ctx.pool.ParallelFor(rows, conv::GrainFor(rows, static_cast<int64_t>(a.ow) * a.c * a.kh * a.kw),
                       [&](int64_t r0, int64_t r1) { run(a, r0, r1); });
}

}  // namespace

Kernel DepthwiseConv2DKernel() { return {CheckDepthwiseConv2d, EvalDepthwiseConv2d}; }

}  // namespace gpuclean::exec::kernels
