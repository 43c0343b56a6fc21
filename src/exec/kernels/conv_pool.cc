// 2-D pooling over NHWC float32 (MAX_POOL_2D, AVERAGE_POOL_2D, L2_POOL_2D and
// the MediaPipe pooling ops): the window loops per instruction set, and the
// shared check and eval of the two builtin pooling ops. See conv_util.h.
#if defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wpsabi"  // vectors only cross inlined helpers
#endif

#include "exec/kernels/conv_util.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "gpuclean/error.h"
#include "gpuclean/shapes.h"

namespace gpuclean::exec::kernels::conv {

// ------------------------------------------------------------------ pooling

namespace {

template <PoolKind kKind>
GPUCLEAN_CONV_INLINE void PoolRows(const float* __restrict in, const PoolGeometry& g, Clamp clamp,
                                   float* __restrict out, int64_t r0, int64_t r1) {
  const int c = g.c;
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t b = r / g.out_h;
    const int oy = static_cast<int>(r % g.out_h);
    const int iy0 = oy * g.stride_h - g.pad_top;
    const int fy0 = std::max(0, -iy0), fy1 = std::min(g.fh, g.in_h - iy0);
    for (int ox = 0; ox < g.out_w; ++ox) {
      const int ix0 = ox * g.stride_w - g.pad_left;
      const int fx0 = std::max(0, -ix0), fx1 = std::min(g.fw, g.in_w - ix0);
      float* __restrict o = out + (r * g.out_w + ox) * c;
      constexpr bool kMax = kKind == PoolKind::kMax;
      const float init = kMax ? std::numeric_limits<float>::lowest() : 0.0f;
      for (int i = 0; i < c; ++i) o[i] = init;
      // The accumulation: window rows then columns, in order.
      for (int fy = fy0; fy < fy1; ++fy) {
        for (int fx = fx0; fx < fx1; ++fx) {
          const float* __restrict p = in + ((b * g.in_h + iy0 + fy) * g.in_w + ix0 + fx) * c;
          if constexpr (kMax) {
            for (int i = 0; i < c; ++i) o[i] = p[i] > o[i] ? p[i] : o[i];
          } else if constexpr (kKind == PoolKind::kL2) {
            for (int i = 0; i < c; ++i) o[i] += p[i] * p[i];
          } else {
            for (int i = 0; i < c; ++i) o[i] += p[i];
          }
        }
      }
      if constexpr (!kMax) {
        const float count = static_cast<float>(std::max(0, fy1 - fy0) * std::max(0, fx1 - fx0));
        for (int i = 0; i < c; ++i) o[i] = o[i] / count;
        // L2: the root of the mean square over the in-bounds elements
        // (tflite/kernels/internal/reference/pooling.h, L2Pool).
        if constexpr (kKind == PoolKind::kL2)
          for (int i = 0; i < c; ++i) o[i] = std::sqrt(o[i]);
      }
      const float lo = clamp.lo, hi = clamp.hi;
      for (int i = 0; i < c; ++i) o[i] = o[i] < lo ? lo : (o[i] > hi ? hi : o[i]);
    }
  }
}

using PoolFn = void (*)(const float*, const PoolGeometry&, Clamp, float*, int64_t, int64_t);
template <PoolKind kKind>
GPUCLEAN_CONV_HOT void PoolGeneric(const float* in, const PoolGeometry& g, Clamp cl, float* out, int64_t r0,
                                   int64_t r1) {
  PoolRows<kKind>(in, g, cl, out, r0, r1);
}
#if GPUCLEAN_CONV_X86
template <PoolKind kKind>
GPUCLEAN_TARGET_AVX2 void PoolAvx2(const float* in, const PoolGeometry& g, Clamp cl, float* out, int64_t r0,
                                   int64_t r1) {
  PoolRows<kKind>(in, g, cl, out, r0, r1);
}
template <PoolKind kKind>
GPUCLEAN_TARGET_AVX512 void PoolAvx512(const float* in, const PoolGeometry& g, Clamp cl, float* out, int64_t r0,
                                       int64_t r1) {
  PoolRows<kKind>(in, g, cl, out, r0, r1);
}
#endif

template <PoolKind kKind>
PoolFn SelectPool() {
#if GPUCLEAN_CONV_X86
  if (ActiveIsa() == Isa::kAvx512) return PoolAvx512<kKind>;
  if (ActiveIsa() == Isa::kAvx2) return PoolAvx2<kKind>;
#endif
  return PoolGeneric<kKind>;
}

}  // namespace

void Pool2D(ThreadPool& pool, const float* in, const PoolGeometry& g, PoolKind kind, Clamp clamp, float* out) {
  const PoolFn run = kind == PoolKind::kMax       ? SelectPool<PoolKind::kMax>()
                     : kind == PoolKind::kAverage ? SelectPool<PoolKind::kAverage>()
                                                  : SelectPool<PoolKind::kL2>();
  const int64_t rows = static_cast<int64_t>(g.batch) * g.out_h;
  pool.ParallelFor(rows, GrainFor(rows, static_cast<int64_t>(g.out_w) * g.c * g.fh * g.fw),
                   [&](int64_t r0, int64_t r1) { run(in, g, clamp, out, r0, r1); });
}

void CheckPool2D(const ir::Subgraph& graph, const ir::Op& op) {
  RequireFloat32(graph, op);
  const auto* o = op.options.AsPool2DOptions();
  if (!o) ThrowBadInput(graph, op, "missing Pool2DOptions");
  if (InputRank(graph, op, 0) != 4) ThrowUnsupportedAttr(graph, op, "input of rank other than 4");
  if (o->stride_w <= 0 || o->stride_h <= 0 || o->filter_width <= 0 || o->filter_height <= 0)
    ThrowBadInput(graph, op, "strides and filter sizes must be positive");
}

void EvalPool2D(KernelContext& ctx, PoolKind kind) {
  const auto& o = *ctx.op.options.AsPool2DOptions();
  const Tensor& in = ctx.input(0);
  Tensor& out = ctx.output(0);
  if (out.num_elements() == 0) return;
  PoolGeometry g;
  g.batch = in.dim(0);
  g.in_h = in.dim(1);
  g.in_w = in.dim(2);
  g.c = in.dim(3);
  g.out_h = out.dim(1);
  g.out_w = out.dim(2);
  g.fh = o.filter_height;
  g.fw = o.filter_width;
  g.stride_h = o.stride_h;
  g.stride_w = o.stride_w;
  const auto& pad = ctx.input_pad;  // MAX_POOL_2D after a skipped PAD (interpreter.cc)
  g.pad_top = pad[0] + PaddingBefore(g.in_h + pad[0] + pad[1], g.fh, g.stride_h, 1, g.out_h);
  g.pad_left = pad[2] + PaddingBefore(g.in_w + pad[2] + pad[3], g.fw, g.stride_w, 1, g.out_w);
  Pool2D(ctx.pool, in.as<float>(), g, kind, ActivationClamp(o.fused_activation_function), out.as<float>());
}

}  // namespace gpuclean::exec::kernels::conv
