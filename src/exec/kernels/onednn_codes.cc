// CONV_2D on integer codes, by oneDNN's 8-bit convolution (VNNI where the
// CPU has it).
//
// A dynamically quantized model (onnxruntime's quantize_dynamic:
// DynamicQuantizeLinear, then ConvInteger) converts to float ops on whole
// numbers: the convolution reads activation codes minus their zero point
// (times a power of two after dot-scale-first) and weights that are codes
// minus theirs. Its sums are sums of integers. oneDNN's u8 x s8 convolution
// with a source zero point computes them exactly in 32-bit integers, 3.9x
// faster than its fp32 one on the 1024x1024 ISNet's largest layer (87 against
// 342 ms, one thread, AVX-512 VNNI dev box).
//
// Nothing about the graph is assumed; the values decide:
// - the weights (constant, looked at once per op): every one an integer
//   times one power of two q, spanning at most 256 integers. Codes minus a
//   zero point can span -255..255 in all but never more than 256 values, so
//   they are stored as s8 after subtracting an offset c, and c times the sum
//   of the input under the window is added back;
// - the input (every run): every value an integer times the smallest power
//   of two s that puts its range within 255 steps, so it is stored as u8
//   above its minimum, which becomes oneDNN's zero point (padding then reads
//   as a real zero, checked against a hand sum in the tests).
// Any other input runs the fp32 convolution (onednn.cc), and the op stops
// trying after one refused input.
//
// The result, float(exact integer sum) * s * q + bias, is the correctly
// rounded one; an fp32 convolution gives the same bits whenever its partial
// sums are exact (under 2^24 steps) and its bias is added last, and
// otherwise differs by its own rounding.
#include <atomic>

#include "exec/kernels/conv_util.h"

#if defined(GPUCLEAN_WITH_ONEDNN)
#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <mutex>
#include <optional>

#include "exec/kernels/onednn_state.h"
#include "gpuclean/limits.h"
#endif

namespace gpuclean::exec::kernels::conv {

namespace {
std::atomic<int64_t> g_code_convolutions{0};
}  // namespace

int64_t IntegerCodeConvolutions() { return g_code_convolutions.load(std::memory_order_relaxed); }

#if defined(GPUCLEAN_WITH_ONEDNN)
namespace onednn {

struct CodesConv {
  dnnl::primitive primitive;   // u8 source with a runtime zero point, s8 weights, s32 destination
  dnnl::memory weights;        // integer weights minus `weight_offset`, in the primitive's layout
  float weight_unit = 1;       // q: every weight is an integer times this power of two
  int32_t weight_offset = 0;   // c
  int reduction = 0;           // KH * KW * input channels
  bool input_refused = false;  // an input was not codes: stop looking
};

}  // namespace onednn

namespace {

using onednn::CodesConv;
using onednn::CpuEngine;
using onednn::OneDnnState;

// Beyond this many steps from zero an input is not codes; it also keeps every
// sum inside 32 bits (checked with the reduction size per op).
constexpr double kMaxCodeMagnitude = 1 << 24;

// The exponent of the lowest set bit of a finite nonzero x, and how many
// significant bits it has.
int LowestBitExponent(float x, int* significant_bits) {
  int e = 0;
  const float m = std::frexp(x, &e);                                        // x = m * 2^e, 0.5 <= |m| < 1
  const auto mantissa = static_cast<uint32_t>(std::fabs(m) * 16777216.0f);  // exact: 24 bits
  const int zeros = __builtin_ctz(mantissa);
  *significant_bits = 24 - zeros;
  return e - 24 + zeros;
}

// The weights as s8 codes, or nothing when they are not integers of one
// power-of-two unit spanning at most 256 values.
std::optional<std::vector<int8_t>> WeightCodes(const float* w, int64_t n, float* unit, int32_t* offset) {
  // A code of at most 255 in magnitude has at most 8 significant bits: a
  // model's float weights fail at their first element.
  int lowest = INT_MAX;
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(w[i])) return std::nullopt;
    if (w[i] == 0) continue;
    int bits = 0;
    lowest = std::min(lowest, LowestBitExponent(w[i], &bits));
    if (bits > 8) return std::nullopt;
  }
  if (lowest == INT_MAX || lowest < -140 || lowest > 100) return std::nullopt;  // all zero, or no float unit
  const double q = std::ldexp(1.0, lowest);
  double lo = 0, hi = 0;
  for (int64_t i = 0; i < n; ++i) {
    lo = std::min(lo, w[i] / q);
    hi = std::max(hi, w[i] / q);
  }
  if (hi - lo > 255 || std::max(-lo, hi) > 255) return std::nullopt;
  const auto c = static_cast<int32_t>(lo >= -128 && hi <= 127 ? 0 : lo + 128);
  std::vector<int8_t> codes(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) codes[i] = static_cast<int8_t>(static_cast<int32_t>(w[i] / q) - c);
  *unit = static_cast<float>(q);
  *offset = c;
  return codes;
}

std::shared_ptr<CodesConv> BuildCodesConv(const KernelContext& ctx, const ConvGeometry& g, int out_c, const float* w) {
  auto codes = std::make_shared<CodesConv>();
  codes->reduction = g.kh * g.kw * g.in_c;
  const int64_t n = static_cast<int64_t>(out_c) * codes->reduction;
  const std::optional<std::vector<int8_t>> weights = WeightCodes(w, n, &codes->weight_unit, &codes->weight_offset);
  // The sum's bound: 255 input steps (plus the zero point's shift, bounded
  // per run) times 128 weight steps per term.
  if (!weights || codes->reduction > (1 << 16)) return nullptr;
  const int pad_bottom = onednn::PaddingAfter(g.in_h, g.kh, g.stride_h, g.dil_h, g.pad_top, g.out_h);
  const int pad_right = onednn::PaddingAfter(g.in_w, g.kw, g.stride_w, g.dil_w, g.pad_left, g.out_w);
  if (pad_bottom < 0 || pad_right < 0 || g.pad_top < 0 || g.pad_left < 0) return nullptr;
  using dnnl::memory;
  using tag = memory::format_tag;
  const memory::dims wdims{out_c, g.in_c, g.kh, g.kw};
  try {
    const dnnl::convolution_forward::desc desc(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
        memory::desc({g.batch, g.in_c, g.in_h, g.in_w}, memory::data_type::u8, tag::nhwc),
        memory::desc(wdims, memory::data_type::s8, tag::any),
        memory::desc({g.batch, out_c, g.out_h, g.out_w}, memory::data_type::s32, tag::nhwc), {g.stride_h, g.stride_w},
        {g.dil_h - 1, g.dil_w - 1}, {g.pad_top, g.pad_left}, {pad_bottom, pad_right});
    dnnl::primitive_attr attr;
    attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
    onednn::UseThreads(ctx);
    const dnnl::convolution_forward::primitive_desc pd(desc, attr, CpuEngine());
    CheckMemory(pd.weights_desc().get_size(),
                fmt::format("oneDNN 8-bit weights of op {} ({})", ctx.op_index, ctx.op.name()));
    codes->primitive = dnnl::convolution_forward(pd);
    codes->weights = memory(pd.weights_desc(), CpuEngine());
    memory given({wdims, memory::data_type::s8, tag::ohwi}, CpuEngine(), const_cast<int8_t*>(weights->data()));
    dnnl::stream stream(CpuEngine());
    dnnl::reorder(given, codes->weights).execute(stream, given, codes->weights);
    stream.wait();
  } catch (const dnnl::error&) {
    return nullptr;  // a case this oneDNN does not implement
  }
  return codes;
}

struct Extent {
  float lo = std::numeric_limits<float>::infinity();
  float hi = -std::numeric_limits<float>::infinity();
  bool nan = false;
};

GPUCLEAN_CONV_HOT Extent ExtentOf(const float* x, int64_t n) {
  constexpr int kLanes = 16;
  float lo[kLanes], hi[kLanes];
  int nan[kLanes] = {};
  std::fill(lo, lo + kLanes, std::numeric_limits<float>::infinity());
  std::fill(hi, hi + kLanes, -std::numeric_limits<float>::infinity());
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) {
      const float v = x[i + l];
      lo[l] = v < lo[l] ? v : lo[l];
      hi[l] = v > hi[l] ? v : hi[l];
      nan[l] |= v != v;
    }
  Extent e;
  for (int l = 0; l < kLanes; ++l) {
    e.lo = std::min(e.lo, lo[l]);
    e.hi = std::max(e.hi, hi[l]);
    e.nan |= nan[l] != 0;
  }
  for (; i < n; ++i) {
    e.lo = std::min(e.lo, x[i]);
    e.hi = std::max(e.hi, x[i]);
    e.nan |= x[i] != x[i];
  }
  return e;
}

// u[i] = x[i] / unit - first, for pixels of `depth` values each, with the
// sum of each pixel's u in `sums` (when given). False when some x[i] / unit
// is not an integer. The caller has checked every value is finite and
// within kMaxCodeMagnitude units, so the conversions are exact.
GPUCLEAN_CONV_HOT bool ToCodes(const float* x, int64_t pixels, int depth, float inverse_unit, int32_t first, uint8_t* u,
                               int32_t* sums) {
  int inexact = 0;
  for (int64_t p = 0; p < pixels; ++p) {
    const float* xp = x + p * depth;
    uint8_t* up = u + p * depth;
    int32_t sum = 0;
    for (int c = 0; c < depth; ++c) {
      const float r = xp[c] * inverse_unit;
      const auto k = static_cast<int32_t>(r);
      inexact |= static_cast<float>(k) != r;
      const int32_t code = k - first;
      up[c] = static_cast<uint8_t>(code);
      sum += code;
    }
    if (sums) sums[p] = sum;
  }
  return inexact == 0;
}

// Scratch for the u8 input and its pixel sums: kept per calling thread
// between ops, grown to the largest input (a model's largest activation in
// bytes, a quarter of its float size).
struct CodesScratch {
  std::unique_ptr<uint8_t[]> codes;
  std::unique_ptr<int32_t[]> sums;
  size_t codes_size = 0, sums_size = 0;
};

CodesScratch& Scratch(int64_t codes, int64_t sums, const KernelContext& ctx) {
  thread_local CodesScratch scratch;
  if (static_cast<size_t>(codes) > scratch.codes_size) {
    scratch.codes.reset();
    CheckMemory(codes, fmt::format("8-bit input codes of op {} ({})", ctx.op_index, ctx.op.name()));
    scratch.codes.reset(new uint8_t[codes]);
    scratch.codes_size = codes;
  }
  if (static_cast<size_t>(sums) > scratch.sums_size) {
    scratch.sums.reset();
    CheckMemory(sums * sizeof(int32_t), fmt::format("pixel sums of op {} ({})", ctx.op_index, ctx.op.name()));
    scratch.sums.reset(new int32_t[sums]);
    scratch.sums_size = sums;
  }
  return scratch;
}

// out[p, o] = clamp(float(acc[p, o] + c * window_sum(p)) * unit + bias[o]),
// acc read from where the float is written (oneDNN's s32 destination).
struct Epilogue {
  const ConvGeometry* g;
  int out_c;
  int32_t offset;             // c
  const int32_t* sums;        // per input pixel: sum of its u (c != 0 only)
  int64_t first_times_depth;  // the zero point's share of each pixel's sum
  float unit;
  const float* bias;
  Clamp clamp;
};

GPUCLEAN_CONV_HOT int64_t WindowSum(const Epilogue& e, int64_t b, int oy, int ox) {
  const ConvGeometry& g = *e.g;
  int64_t s = 0;
  for (int ky = 0; ky < g.kh; ++ky) {
    const int iy = oy * g.stride_h - g.pad_top + ky * g.dil_h;
    if (iy < 0 || iy >= g.in_h) continue;
    for (int kx = 0; kx < g.kw; ++kx) {
      const int ix = ox * g.stride_w - g.pad_left + kx * g.dil_w;
      if (ix < 0 || ix >= g.in_w) continue;
      s += e.sums[(b * g.in_h + iy) * g.in_w + ix] + e.first_times_depth;
    }
  }
  return s;
}

GPUCLEAN_CONV_HOT void FinishPixels(const Epilogue& e, float* out, int64_t begin, int64_t end) {
  const ConvGeometry& g = *e.g;
  for (int64_t p = begin; p < end; ++p) {
    float* row = out + p * e.out_c;
    int64_t shift = 0;
    if (e.offset != 0) {
      const int64_t b = p / (static_cast<int64_t>(g.out_h) * g.out_w);
      const int64_t rest = p % (static_cast<int64_t>(g.out_h) * g.out_w);
      shift = e.offset * WindowSum(e, b, static_cast<int>(rest / g.out_w), static_cast<int>(rest % g.out_w));
    }
    for (int o = 0; o < e.out_c; ++o) {
      int32_t acc;
      std::memcpy(&acc, row + o, sizeof(acc));
      float v = static_cast<float>(static_cast<int64_t>(acc) + shift) * e.unit;
      if (e.bias) v += e.bias[o];
      row[o] = e.clamp(v);
    }
  }
}

bool CodesDisabled() {
  static const bool disabled = [] {
    const char* v = std::getenv("GPUCLEAN_INTEGER_CODES");
    return v && std::string(v) == "0";
  }();
  return disabled;
}

}  // namespace

bool OneDnnCodesConv2D(KernelContext& ctx, const ConvGeometry& g, int groups, int out_c, const float* w,
                       const float* bias, Clamp clamp, float* out) {
  if (!ctx.state || groups != 1 || !ctx.input_is_fixed(1) || (bias && !ctx.input_is_fixed(2)) || OneDnnDisabled() ||
      CodesDisabled() || g.in_pixel_stride != g.in_c || g.in_c_offset != 0)
    return false;
  bool other = false;
  std::shared_ptr<OneDnnState> state = onednn::Cached(ctx, &other);
  if (other) return false;
  if (!state || state->source != w) {
    state = std::make_shared<OneDnnState>();  // the fp32 primitive is built when first needed
    state->source = w;
    *ctx.state = state;
  }
  if (!state->codes_decided) {
    state->codes = BuildCodesConv(ctx, g, out_c, w);
    state->codes_decided = true;
  }
  CodesConv* codes = state->codes.get();
  if (!codes || codes->input_refused) return false;

  // The input's extent, then its unit: the smallest power of two that puts
  // the range within 255 steps.
  const float* x = ctx.input(0).as<float>();
  const int64_t pixels = static_cast<int64_t>(g.batch) * g.in_h * g.in_w;
  const int64_t n = pixels * g.in_c;
  Extent extent;
  std::mutex merge;
  ctx.pool.ParallelFor(n, 1 << 16, [&](int64_t begin, int64_t end) {
    const Extent part = ExtentOf(x + begin, end - begin);
    const std::lock_guard<std::mutex> lock(merge);
    extent.lo = std::min(extent.lo, part.lo);
    extent.hi = std::max(extent.hi, part.hi);
    extent.nan |= part.nan;
  });
  const double range = static_cast<double>(extent.hi) - extent.lo;
  if (extent.nan || !std::isfinite(range) || range == 0) return false;  // not codes this run; a constant input
  double unit = std::ldexp(1.0, std::ilogb(range / 255));
  while (range > 255 * unit) unit *= 2;
  const double magnitude = std::max(std::fabs(extent.lo), std::fabs(extent.hi)) / unit;
  if (magnitude > kMaxCodeMagnitude || magnitude * 128 * codes->reduction >= 2147483647.0 || unit < 0x1p-126) {
    codes->input_refused = true;
    return false;
  }
  const auto first = static_cast<int32_t>(std::floor(extent.lo / unit));

  CodesScratch& scratch = Scratch(n, codes->weight_offset != 0 ? pixels : 0, ctx);
  int32_t* sums = codes->weight_offset != 0 ? scratch.sums.get() : nullptr;
  std::atomic<bool> exact{true};
  const auto inverse_unit = static_cast<float>(1 / unit);
  ctx.pool.ParallelFor(pixels, std::max<int64_t>(1, (1 << 16) / g.in_c), [&](int64_t begin, int64_t end) {
    if (!ToCodes(x + begin * g.in_c, end - begin, g.in_c, inverse_unit, first, scratch.codes.get() + begin * g.in_c,
                 sums ? sums + begin : nullptr))
      exact.store(false, std::memory_order_relaxed);
  });
  if (!exact.load()) {
    codes->input_refused = true;
    return false;
  }

  using dnnl::memory;
  const memory src({{g.batch, g.in_c, g.in_h, g.in_w}, memory::data_type::u8, memory::format_tag::nhwc}, CpuEngine(),
                   scratch.codes.get());
  const memory dst({{g.batch, out_c, g.out_h, g.out_w}, memory::data_type::s32, memory::format_tag::nhwc}, CpuEngine(),
                   out);
  int32_t zero_point = -first;
  const memory zero_point_memory({{1}, memory::data_type::s32, memory::format_tag::x}, CpuEngine(), &zero_point);
  onednn::Execute(ctx, codes->primitive,
                  {{DNNL_ARG_SRC, src},
                   {DNNL_ARG_WEIGHTS, codes->weights},
                   {DNNL_ARG_DST, dst},
                   {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, zero_point_memory}});

  const Epilogue epilogue{&g,
                          out_c,
                          codes->weight_offset,
                          sums,
                          static_cast<int64_t>(first) * g.in_c,
                          static_cast<float>(unit * codes->weight_unit),
                          bias,
                          clamp};
  const int64_t out_pixels = static_cast<int64_t>(g.batch) * g.out_h * g.out_w;
  ctx.pool.ParallelFor(out_pixels, std::max<int64_t>(1, (1 << 14) / out_c),
                       [&](int64_t begin, int64_t end) { FinishPixels(epilogue, out, begin, end); });
  g_code_convolutions.fetch_add(1, std::memory_order_relaxed);
  return true;
}

#else

bool OneDnnCodesConv2D(KernelContext&, const ConvGeometry&, int, int, const float*, const float*, Clamp, float*) {
  return false;
}

#endif

}  // namespace gpuclean::exec::kernels::conv
