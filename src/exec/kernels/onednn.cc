// CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED and BATCH_MATMUL through
// oneDNN (Debian's libdnnl, v2.6): its JIT convolutions on NHWC tensors ran
// 185-215 GFLOP/s single-threaded on the dev box (AVX-512, brgconv) for
// ResNet's and ConvNeXt's layer shapes, where our GEMM reaches ~60
// (conv_gemm.cc). The primitive, and the weights in oneDNN's blocked layout,
// are built once per op and interpreter (KernelContext::state); inputs and
// outputs are the interpreter's NHWC buffers, read and written in place. The
// convolutions and FULLY_CONNECTED take this path only with constant weights
// and bias (a model's weights); BATCH_MATMUL reads both runtime operands
// through strides. A case oneDNN refuses, or a build without it (the
// sanitizer and fuzz builds), returns false and the caller runs our GEMM.
#include "exec/kernels/conv_util.h"

#if defined(GPUCLEAN_WITH_ONEDNN)
#include <omp.h>

#include <algorithm>
#include <memory>
#include <oneapi/dnnl/dnnl.hpp>

#include "exec/kernels/onednn_state.h"
#include "gpuclean/limits.h"
#endif

namespace gpuclean::exec::kernels::conv {

#if defined(GPUCLEAN_WITH_ONEDNN)
namespace onednn {

dnnl::engine& CpuEngine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

std::shared_ptr<OneDnnState> Cached(const KernelContext& ctx, bool* other) {
  *other = false;
  if (!ctx.state->has_value()) return nullptr;
  const auto* cached = std::any_cast<std::shared_ptr<OneDnnState>>(ctx.state);
  *other = cached == nullptr;
  return cached ? *cached : nullptr;
}

// Set before a primitive is built, not only before it runs: oneDNN sizes a
// primitive's work split (and some primitives their parallel region) by
// omp_get_max_threads() when it is created, and the weights' reorder runs
// at build time. Left at OpenMP's default (one per core), `--threads 1`
// started a second OpenMP thread that spun in libgomp after each call. On
// the loaded 2-core dev box that spinner took 60% of mha_parity's samples
// (1 thread: 7.7 ms median against a 1.0 ms minimum; see docs/convert.md).
void UseThreads(const KernelContext& ctx) { omp_set_num_threads(ctx.pool.size()); }

void Execute(const KernelContext& ctx, const dnnl::primitive& primitive,
             const std::unordered_map<int, dnnl::memory>& args) {
  UseThreads(ctx);
  try {
    dnnl::stream stream(CpuEngine());
    primitive.execute(stream, args);
    stream.wait();
  } catch (const dnnl::error& e) {
    ThrowInternal(fmt::format("op {} ({}): oneDNN failed to run a primitive it built: {}", ctx.op_index, ctx.op.name(),
                              e.what()));
  }
}

// Negative where a strided window leaves the last rows unread (a VALID
// stride-2 conv after an explicit PAD) and no padding makes oneDNN's floor
// division give `out`.
int PaddingAfter(int in, int k, int stride, int dil, int before, int out) {
  const int extent = (k - 1) * dil + 1;
  const int pad = std::max(0, (out - 1) * stride + extent - in - before);
  return (in + before + pad - extent) / stride + 1 == out ? pad : -1;
}

}  // namespace onednn

namespace {

using onednn::CpuEngine;
using onednn::OneDnnState;
using onednn::UseThreads;

dnnl::primitive_attr ClampAttr(Clamp clamp) {
  dnnl::post_ops post;
  if (clamp.lo > -std::numeric_limits<float>::infinity() || clamp.hi < std::numeric_limits<float>::infinity())
    post.append_eltwise(1.0f, dnnl::algorithm::eltwise_clip, clamp.lo, clamp.hi);
  dnnl::primitive_attr attr;
  attr.set_post_ops(post);
  return attr;
}

// Weights given in `user` layout reordered into the primitive's, bias copied.
void FillWeights(OneDnnState& state, const dnnl::memory::desc& want, const dnnl::memory::desc& user, const float* w,
                 const float* bias, int n, const KernelContext& ctx) {
  CheckMemory(want.get_size(), fmt::format("oneDNN weights of op {} ({})", ctx.op_index, ctx.op.name()));
  state.weights = dnnl::memory(want, CpuEngine());
  dnnl::memory given(user, CpuEngine(), const_cast<float*>(w));
  dnnl::stream stream(CpuEngine());
  dnnl::reorder(given, state.weights).execute(stream, given, state.weights);
  stream.wait();
  if (bias) {
    state.bias = dnnl::memory({{n}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::x}, CpuEngine());
    std::memcpy(state.bias.get_data_handle(), bias, static_cast<size_t>(n) * sizeof(float));
  }
  state.source = w;
}

void Execute(const KernelContext& ctx, OneDnnState& state, std::unordered_map<int, dnnl::memory> args) {
  if (!args.count(DNNL_ARG_WEIGHTS)) args[DNNL_ARG_WEIGHTS] = state.weights;
  if (state.bias) args[DNNL_ARG_BIAS] = state.bias;
  onednn::Execute(ctx, state.primitive, args);
}

// `depthwise`: the filter is DEPTHWISE_CONV_2D's [1, KH, KW, C * mult]
// (groups = C, one input channel each), else CONV_2D's OHWI per group.
std::shared_ptr<OneDnnState> BuildConv(const KernelContext& ctx, const ConvGeometry& g, int groups, int out_c,
                                       const float* w, const float* bias, Clamp clamp, bool depthwise) {
  using dnnl::memory;
  using tag = memory::format_tag;
  const memory::data_type f32 = memory::data_type::f32;
  const int in_c = g.in_c * groups;
  const int pad_bottom = onednn::PaddingAfter(g.in_h, g.kh, g.stride_h, g.dil_h, g.pad_top, g.out_h);
  const int pad_right = onednn::PaddingAfter(g.in_w, g.kw, g.stride_w, g.dil_w, g.pad_left, g.out_w);
  if (pad_bottom < 0 || pad_right < 0 || g.pad_top < 0 || g.pad_left < 0) return nullptr;
  const memory::desc src({g.batch, in_c, g.in_h, g.in_w}, f32, tag::nhwc);
  const memory::desc dst({g.batch, out_c, g.out_h, g.out_w}, f32, tag::nhwc);
  const int og = out_c / groups;
  // The filter as stored, OHWI per group: [G, O/G, I/G, KH, KW] with I fastest.
  const memory::dims wdims =
      groups == 1 ? memory::dims{out_c, g.in_c, g.kh, g.kw} : memory::dims{groups, og, g.in_c, g.kh, g.kw};
  try {
    const dnnl::convolution_forward::desc desc(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src,
        memory::desc(wdims, f32, tag::any), bias ? memory::desc({out_c}, f32, tag::x) : memory::desc(), dst,
        {g.stride_h, g.stride_w}, {g.dil_h - 1, g.dil_w - 1}, {g.pad_top, g.pad_left}, {pad_bottom, pad_right});
    const dnnl::convolution_forward::primitive_desc pd(desc, ClampAttr(clamp), CpuEngine());
    auto state = std::make_shared<OneDnnState>();
    state->primitive = dnnl::convolution_forward(pd);
    const tag user = depthwise ? tag::hwigo : groups == 1 ? tag::ohwi : tag::gohwi;
    FillWeights(*state, pd.weights_desc(), memory::desc(wdims, f32, user), w, bias, out_c, ctx);
    return state;
  } catch (const dnnl::error&) {
    return nullptr;  // a case this oneDNN does not implement
  }
}

// y[M, N] = x[M, K] w[N, K]^T + bias: oneDNN's matmul with the weights read
// as a [K, N] column-major matrix.
std::shared_ptr<OneDnnState> BuildMatMul(const KernelContext& ctx, int64_t m, int n, int k, const float* w,
                                         const float* bias, Clamp clamp) {
  using dnnl::memory;
  using tag = memory::format_tag;
  const memory::data_type f32 = memory::data_type::f32;
  try {
    const dnnl::matmul::desc desc(memory::desc({m, k}, f32, tag::ab), memory::desc({k, n}, f32, tag::any),
                                  bias ? memory::desc({1, n}, f32, tag::ab) : memory::desc(),
                                  memory::desc({m, n}, f32, tag::ab));
    const dnnl::matmul::primitive_desc pd(desc, ClampAttr(clamp), CpuEngine());
    auto state = std::make_shared<OneDnnState>();
    state->primitive = dnnl::matmul(pd);
    FillWeights(*state, pd.weights_desc(), memory::desc({k, n}, f32, tag::ba), w, nullptr, n, ctx);
    if (bias) {
      state->bias = memory({{1, n}, f32, tag::ab}, CpuEngine());
      std::memcpy(state->bias.get_data_handle(), bias, static_cast<size_t>(n) * sizeof(float));
    }
    state->rows = m;
    return state;
  } catch (const dnnl::error&) {
    return nullptr;
  }
}

}  // namespace

// x [..., M, K] (adj_x: stored [..., K, M]) times y [..., K, N] (adj_y:
// stored [..., N, K]), batch dimensions broadcast: both operands are read
// in place through strides, each padded with leading 1s to the output's rank.
std::shared_ptr<OneDnnState> BuildBatchMatMul(const Tensor& x, const Tensor& y, const Tensor& out, bool adj_x,
                                              bool adj_y) {
  using dnnl::memory;
  const int rank = out.rank();
  const auto operand = [rank](const std::vector<int32_t>& shape, bool adj) {
    // Logical dims [..., R, C] of the operand as the product reads it, and the
    // strides of its row-major storage ([..., C, R] when adjoint).
    memory::dims dims(rank, 1), strides(rank, 0);
    const int offset = rank - static_cast<int>(shape.size());
    for (size_t d = 0; d < shape.size(); ++d) dims[offset + d] = shape[d];
    int64_t stride = 1;
    for (int d = rank - 1; d >= 0; --d) {
      strides[d] = stride;
      stride *= dims[d];
    }
    if (adj) {
      std::swap(dims[rank - 1], dims[rank - 2]);
      std::swap(strides[rank - 1], strides[rank - 2]);
    }
    return memory::desc(dims, memory::data_type::f32, strides);
  };
  try {
    auto state = std::make_shared<OneDnnState>();
    state->src = operand(x.shape, adj_x);
    state->wei = operand(y.shape, adj_y);
    memory::dims out_dims(out.shape.begin(), out.shape.end());
    state->dst = memory::desc(out_dims, memory::data_type::f32,
                              memory::format_tag(rank == 2   ? memory::format_tag::ab
                                                 : rank == 3 ? memory::format_tag::abc
                                                 : rank == 4 ? memory::format_tag::abcd
                                                             : memory::format_tag::abcde));
    const dnnl::matmul::desc desc(state->src, state->wei, state->dst);
    const dnnl::matmul::primitive_desc pd(desc, CpuEngine());
    state->primitive = dnnl::matmul(pd);
    state->x_shape = x.shape;
    state->y_shape = y.shape;
    return state;
  } catch (const dnnl::error&) {
    return nullptr;
  }
}

namespace {

bool RunConv(KernelContext& ctx, const ConvGeometry& g, int groups, int out_c, const float* w, const float* bias,
             Clamp clamp, float* out, bool depthwise) {
  if (!ctx.state || !ctx.input_is_fixed(1) || (bias && !ctx.input_is_fixed(2)) || OneDnnDisabled()) return false;
  UseThreads(ctx);
  bool other = false;
  std::shared_ptr<OneDnnState> state = onednn::Cached(ctx, &other);
  if (other) return false;
  if (!state || state->source != w || !state->primitive) {
    std::shared_ptr<OneDnnState> built = BuildConv(ctx, g, groups, out_c, w, bias, clamp, depthwise);
    if (!built) return false;
    if (state && state->source == w) {  // keep what the integer-codes path decided
      built->codes_decided = state->codes_decided;
      built->codes = state->codes;
    }
    *ctx.state = state = built;
  }
  using dnnl::memory;
  const memory::data_type f32 = memory::data_type::f32;
  const memory src(memory::desc({g.batch, g.in_c * groups, g.in_h, g.in_w}, f32, memory::format_tag::nhwc), CpuEngine(),
                   const_cast<float*>(ctx.input(0).as<float>()));
  const memory dst(memory::desc({g.batch, out_c, g.out_h, g.out_w}, f32, memory::format_tag::nhwc), CpuEngine(), out);
  Execute(ctx, *state, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
  return true;
}

}  // namespace

bool OneDnnConv2D(KernelContext& ctx, const ConvGeometry& g, int groups, int out_c, const float* w, const float* bias,
                  Clamp clamp, float* out) {
  return RunConv(ctx, g, groups, out_c, w, bias, clamp, out, /*depthwise=*/false);
}

bool OneDnnDepthwiseConv2D(KernelContext& ctx, const ConvGeometry& g, int out_c, const float* w, const float* bias,
                           Clamp clamp, float* out) {
  ConvGeometry one = g;
  one.in_c = 1;
  return RunConv(ctx, one, g.in_c, out_c, w, bias, clamp, out, /*depthwise=*/true);
}

bool OneDnnFullyConnected(KernelContext& ctx, int64_t m, int n, int k, const float* x, const float* w,
                          const float* bias, Clamp clamp, float* out) {
  if (!ctx.state || !ctx.input_is_fixed(1) || (bias && !ctx.input_is_fixed(2)) || OneDnnDisabled()) return false;
  UseThreads(ctx);
  bool other = false;
  std::shared_ptr<OneDnnState> state = onednn::Cached(ctx, &other);
  if (other) return false;
  if (!state || state->source != w || state->rows != m) {
    state = BuildMatMul(ctx, m, n, k, w, bias, clamp);
    if (!state) return false;
    *ctx.state = state;
  }
  using dnnl::memory;
  const memory::data_type f32 = memory::data_type::f32;
  const memory src(memory::desc({m, k}, f32, memory::format_tag::ab), CpuEngine(), const_cast<float*>(x));
  const memory dst(memory::desc({m, n}, f32, memory::format_tag::ab), CpuEngine(), out);
  Execute(ctx, *state, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
  return true;
}

bool OneDnnBatchMatMul(KernelContext& ctx, bool adj_x, bool adj_y) {
  const Tensor& x = ctx.input(0);
  const Tensor& y = ctx.input(1);
  Tensor& out = ctx.output(0);
  if (!ctx.state || OneDnnDisabled() || out.rank() < 2 || out.rank() > 5) return false;
  UseThreads(ctx);
  bool other = false;
  std::shared_ptr<OneDnnState> state = onednn::Cached(ctx, &other);
  if (other) return false;
  if (!state || state->x_shape != x.shape || state->y_shape != y.shape) {
    state = BuildBatchMatMul(x, y, out, adj_x, adj_y);
    if (!state) return false;
    *ctx.state = state;
  }
  const dnnl::memory src(state->src, CpuEngine(), const_cast<float*>(x.as<float>()));
  const dnnl::memory wei(state->wei, CpuEngine(), const_cast<float*>(y.as<float>()));
  const dnnl::memory dst(state->dst, CpuEngine(), out.as<float>());
  Execute(ctx, *state, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}});
  return true;
}

bool OneDnnAvailable() { return !OneDnnDisabled(); }

#else

bool OneDnnConv2D(KernelContext&, const ConvGeometry&, int, int, const float*, const float*, Clamp, float*) {
  return false;
}
bool OneDnnFullyConnected(KernelContext&, int64_t, int, int, const float*, const float*, const float*, Clamp, float*) {
  return false;
}
bool OneDnnDepthwiseConv2D(KernelContext&, const ConvGeometry&, int, const float*, const float*, Clamp, float*) {
  return false;
}
bool OneDnnBatchMatMul(KernelContext&, bool, bool) { return false; }
bool OneDnnAvailable() { return false; }

#endif

// GPUCLEAN_ONEDNN=0 runs our GEMM everywhere (to compare the two, or to take
// OpenMP's threads out of a measurement).
bool OneDnnDisabled() {
  static const bool disabled = [] {
    const char* v = std::getenv("GPUCLEAN_ONEDNN");
    return v && std::string(v) == "0";
  }();
  return disabled;
}

}  // namespace gpuclean::exec::kernels::conv
