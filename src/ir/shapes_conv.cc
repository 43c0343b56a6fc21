// Shape rules of spatial and matrix ops: convolutions, pooling, fully
// connected, batch matmul, resizes, depth/space shuffles, and the MediaPipe
// custom ops built on them. All spatial tensors are NHWC.
#include "ir/shapes_internal.h"

namespace gpuclean::ir::shapes {
namespace {

void ExpectBias(const OpView& v, int index, int32_t channels) {
  if (!v.has(index)) return;
  if (v.rank(index) != 1 || v.shape(index)[0] != channels)
    v.Fail("bias (input {}) must have shape [{}], got {}", index, channels, FormatShape(v.shape(index)));
}

// Filter [O, KH, KW, I/groups]; groups = input channels / filter channels.
std::vector<TensorSpec> Conv2D(const OpView& v) {
  v.ExpectInputCount(2, 3);
  v.ExpectRank(0, 4, "input");
  v.ExpectRank(1, 4, "filter");
  const auto o = v.Options<tfl::Conv2DOptionsT>();
  const Shape& in = v.shape(0);
  const Shape& filter = v.shape(1);
  const int32_t out_channels = filter[0];
  if (in[3] <= 0) v.Fail("input has {} channels", in[3]);
  if (filter[3] <= 0 || in[3] % filter[3] != 0)
    v.Fail("input has {} channels, which is not a multiple of the filter's {}", in[3], filter[3]);
  const int32_t groups = in[3] / filter[3];
  if (out_channels % groups != 0) v.Fail("{} output channels do not split into {} groups", out_channels, groups);
  ExpectBias(v, 2, out_channels);
  return {{v.dtype(0), CheckedWindowOutput(v, o.padding, in, filter[1], filter[2], o.stride_h, o.stride_w,
                                           o.dilation_h_factor, o.dilation_w_factor, out_channels)}};
}

// Filter [1, KH, KW, I * multiplier]; the depth_multiplier option is
// redundant with the shapes and LiteRT derives it from them.
std::vector<TensorSpec> DepthwiseConv2D(const OpView& v) {
  v.ExpectInputCount(2, 3);
  v.ExpectRank(0, 4, "input");
  v.ExpectRank(1, 4, "filter");
  const auto o = v.Options<tfl::DepthwiseConv2DOptionsT>();
  const Shape& in = v.shape(0);
  const Shape& filter = v.shape(1);
  if (filter[0] != 1) v.Fail("filter must have shape [1,KH,KW,C], got {}", FormatShape(filter));
  const int32_t out_channels = filter[3];
  if (in[3] <= 0 || out_channels % in[3] != 0)
    v.Fail("filter has {} channels, which is not a multiple of the input's {}", out_channels, in[3]);
  ExpectBias(v, 2, out_channels);
  return {{v.dtype(0), CheckedWindowOutput(v, o.padding, in, filter[1], filter[2], o.stride_h, o.stride_w,
                                           o.dilation_h_factor, o.dilation_w_factor, out_channels)}};
}

// Inputs: output_shape, weights [O, KH, KW, I], input, optional bias. The
// output shape is given; it must be one the forward convolution of the same
// geometry maps back onto the input.
std::vector<TensorSpec> TransposeConv(const OpView& v) {
  v.ExpectInputCount(3, 4);
  v.ExpectRank(0, 1, "output_shape");
  v.ExpectRank(1, 4, "weights");
  v.ExpectRank(2, 4, "input");
  const auto o = v.Options<tfl::TransposeConvOptionsT>();
  std::vector<int64_t> requested = v.Ints(0, "output_shape");
  if (requested.size() != 4) v.Fail("output_shape must hold 4 values, got {}", requested.size());
  Shape out;
  for (int64_t d : requested) out.push_back(ToDim(v, d, "output_shape entry"));
  const Shape& weights = v.shape(1);
  const Shape& in = v.shape(2);
  if (weights[3] != in[3]) v.Fail("weights have {} input channels but the input has {}", weights[3], in[3]);
  if (out[0] != in[0]) v.Fail("output batch {} differs from input batch {}", out[0], in[0]);
  if (out[3] != weights[0]) v.Fail("output_shape has {} channels but the weights make {}", out[3], weights[0]);
  ExpectBias(v, 3, weights[0]);
  if (o.stride_h < 1 || o.stride_w < 1) v.Fail("strides must be >= 1, got h={} w={}", o.stride_h, o.stride_w);
  const int32_t back_h = WindowOutputSize(o.padding, out[1], weights[1], o.stride_h);
  const int32_t back_w = WindowOutputSize(o.padding, out[2], weights[2], o.stride_w);
  if (back_h != in[1] || back_w != in[2])
    v.Fail("output {}x{} does not match the {}x{} input for a {}x{} filter, stride {}x{}", out[1], out[2], in[1], in[2],
           weights[1], weights[2], o.stride_h, o.stride_w);
  return {{v.dtype(2), out}};
}

std::vector<TensorSpec> Pool2D(const OpView& v) {
  v.ExpectInputCount(1);
  v.ExpectRank(0, 4, "input");
  const auto o = v.Options<tfl::Pool2DOptionsT>();
  return {{v.dtype(0), CheckedWindowOutput(v, o.padding, v.shape(0), o.filter_height, o.filter_width, o.stride_h,
                                           o.stride_w, 1, 1, v.shape(0)[3])}};
}

// Weights [O, K]. Without keep_num_dims every input row of K values becomes
// one output row: [elements / K, O].
std::vector<TensorSpec> FullyConnected(const OpView& v) {
  v.ExpectInputCount(2, 3);
  v.ExpectRank(1, 2, "weights");
  if (v.rank(0) < 1) v.Fail("input must have rank >= 1");
  const auto o = v.Options<tfl::FullyConnectedOptionsT>();
  const int32_t out_units = v.shape(1)[0];
  const int32_t depth = v.shape(1)[1];
  ExpectBias(v, 2, out_units);
  if (o.keep_num_dims) {
    if (v.shape(0).back() != depth)
      v.Fail("with keep_num_dims the input's last dimension must be {}, got {}", depth, FormatShape(v.shape(0)));
    Shape out = v.shape(0);
    out.back() = out_units;
    return {{v.dtype(0), out}};
  }
  const int64_t elements = v.num_elements(0);
  if (depth <= 0 || elements % depth != 0)
    v.Fail("input {} does not split into rows of {} values", FormatShape(v.shape(0)), depth);
  return {{v.dtype(0), {static_cast<int32_t>(elements / depth), out_units}}};
}

std::vector<TensorSpec> BatchMatMul(const OpView& v) {
  v.ExpectInputCount(2);
  v.ExpectRankBetween(0, 2, 5, "lhs");
  v.ExpectRankBetween(1, 2, 5, "rhs");
  const auto o = v.Options<tfl::BatchMatMulOptionsT>();
  const Shape& lhs = v.shape(0);
  const Shape& rhs = v.shape(1);
  const int lr = v.rank(0), rr = v.rank(1);
  const int32_t rows = o.adj_x ? lhs[lr - 1] : lhs[lr - 2];
  const int32_t lhs_depth = o.adj_x ? lhs[lr - 2] : lhs[lr - 1];
  const int32_t rhs_depth = o.adj_y ? rhs[rr - 1] : rhs[rr - 2];
  const int32_t cols = o.adj_y ? rhs[rr - 2] : rhs[rr - 1];
  if (lhs_depth != rhs_depth)
    v.Fail("contracted dimensions differ: lhs {} (adj_x={}) gives {}, rhs {} (adj_y={}) gives {}", FormatShape(lhs),
           o.adj_x, lhs_depth, FormatShape(rhs), o.adj_y, rhs_depth);
  Shape batch;
  try {
    batch = BroadcastShapes(std::span(lhs).first(lr - 2), std::span(rhs).first(rr - 2));
  } catch (const Error& e) {
    v.Fail("batch dimensions: {}", e.what());
  }
  batch.push_back(rows);
  batch.push_back(cols);
  return {{v.dtype(0), batch}};
}

std::vector<TensorSpec> Resize(const OpView& v) {
  v.ExpectInputCount(2);
  v.ExpectRank(0, 4, "input");
  v.ExpectDType(1, {tfl::TensorType_INT32}, "size");
  std::vector<int64_t> size = v.Ints(1, "size");
  if (size.size() != 2) v.Fail("size must hold 2 values, got {}", size.size());
  if (size[0] <= 0 || size[1] <= 0) v.Fail("size must be positive, got {}x{}", size[0], size[1]);
  // RESIZE_BILINEAR with align_corners and half_pixel_centers both set is
  // valid: the CPU path aligns corners (src/exec/kernels/resize_bilinear.cc),
  // the GPU rejects it (lint), the resize-flags pass clears the second flag.
  const Shape& in = v.shape(0);
  return {{v.dtype(0), {in[0], ToDim(v, size[0], "height"), ToDim(v, size[1], "width"), in[3]}}};
}

std::vector<TensorSpec> DepthToSpace(const OpView& v) {
  v.ExpectInputCount(1);
  v.ExpectRank(0, 4, "input");
  const int32_t block = v.Options<tfl::DepthToSpaceOptionsT>().block_size;
  const Shape& in = v.shape(0);
  if (block < 1) v.Fail("block_size must be >= 1, got {}", block);
  const int64_t block_area = CheckedMul(v, block, block, "block_size^2");
  if (in[3] % block_area != 0) v.Fail("{} channels do not divide by block_size^2 = {}", in[3], block_area);
  return {{v.dtype(0),
           {in[0], ToDim(v, int64_t{in[1]} * block, "output height"), ToDim(v, int64_t{in[2]} * block, "output width"),
            static_cast<int32_t>(in[3] / block_area)}}};
}

std::vector<TensorSpec> SpaceToDepth(const OpView& v) {
  v.ExpectInputCount(1);
  v.ExpectRank(0, 4, "input");
  const int32_t block = v.Options<tfl::SpaceToDepthOptionsT>().block_size;
  const Shape& in = v.shape(0);
  if (block < 1) v.Fail("block_size must be >= 1, got {}", block);
  if (in[1] % block != 0 || in[2] % block != 0) v.Fail("{}x{} does not divide by block_size {}", in[1], in[2], block);
  const int64_t channels = CheckedMul(v, CheckedMul(v, in[3], block, "output channels"), block, "output channels");
  return {{v.dtype(0), {in[0], in[1] / block, in[2] / block, ToDim(v, channels, "output channels")}}};
}

// ---------------------------------------------------------------- MediaPipe

void ExpectFloat(const OpView& v, int i, std::string_view role) { v.ExpectDType(i, {tfl::TensorType_FLOAT32}, role); }

// Inputs x [N,H,W,I], weights [O,KH,KW,I], bias [O]. Unlike TRANSPOSE_CONV
// the output size is implied: stride * (in - 1) + filter, less SAME padding.
std::vector<TensorSpec> Convolution2DTransposeBias(const OpView& v) {
  v.ExpectInputCount(3);
  v.ExpectRank(0, 4, "input");
  v.ExpectRank(1, 4, "weights");
  for (int i = 0; i < 3; ++i) ExpectFloat(v, i, i == 0 ? "input" : i == 1 ? "weights" : "bias");
  const auto o = DecodeMediaPipeTransposeConvOptions(v.op().custom_options);
  const Shape& in = v.shape(0);
  const Shape& w = v.shape(1);
  if (w[3] != in[3]) v.Fail("weights have {} input channels but the input has {}", w[3], in[3]);
  ExpectBias(v, 2, w[0]);
  if (o.stride_h < 1 || o.stride_w < 1) v.Fail("strides must be >= 1, got h={} w={}", o.stride_h, o.stride_w);
  auto out_size = [&](int32_t size, int32_t filter, int32_t stride) {
    if (size < 1) v.Fail("input {} has an empty spatial dimension", FormatShape(in));
    const int64_t padding = o.padding == tfl::Padding_SAME ? std::max(0, filter - (size - 1) % stride - 1) : 0;
    return ToDim(v, int64_t{stride} * (size - 1) + filter - padding, "output size");
  };
  return {
      {tfl::TensorType_FLOAT32, {in[0], out_size(in[1], w[1], o.stride_h), out_size(in[2], w[2], o.stride_w), w[0]}}};
}

// Outputs the pooled values and, as float32, the argmax position inside each
// window (y * filter_w + x).
std::vector<TensorSpec> MaxPoolingWithArgmax2D(const OpView& v) {
  v.ExpectInputCount(1);
  v.ExpectRank(0, 4, "input");
  ExpectFloat(v, 0, "input");
  const auto o = DecodeMediaPipePoolOptions(v.op().custom_options);
  Shape out = CheckedWindowOutput(v, o.padding, v.shape(0), o.filter_h, o.filter_w, o.stride_h, o.stride_w, 1, 1,
                                  v.shape(0)[3]);
  return {{tfl::TensorType_FLOAT32, out}, {tfl::TensorType_FLOAT32, out}};
}

// Scatters each value back into its window: the output is the input scaled
// by the filter size (MediaPipe's rule, whatever the stride).
std::vector<TensorSpec> MaxUnpooling2D(const OpView& v) {
  v.ExpectInputCount(2);
  v.ExpectRank(0, 4, "input");
  ExpectFloat(v, 0, "input");
  ExpectFloat(v, 1, "indices");
  if (v.shape(1) != v.shape(0))
    v.Fail("indices {} must have the input's shape {}", FormatShape(v.shape(1)), FormatShape(v.shape(0)));
  const auto o = DecodeMediaPipePoolOptions(v.op().custom_options);
  if (o.filter_h < 1 || o.filter_w < 1) v.Fail("window must be at least 1x1, got {}x{}", o.filter_h, o.filter_w);
  if (o.stride_h < 1 || o.stride_w < 1) v.Fail("strides must be >= 1, got h={} w={}", o.stride_h, o.stride_w);
  const Shape& in = v.shape(0);
  return {{tfl::TensorType_FLOAT32,
           {in[0], ToDim(v, int64_t{in[1]} * o.filter_h, "output height"),
            ToDim(v, int64_t{in[2]} * o.filter_w, "output width"), in[3]}}};
}

}  // namespace

void AddConvRules(RuleTable& t) {
  t.builtin[tfl::BuiltinOperator_CONV_2D] = Conv2D;
  t.builtin[tfl::BuiltinOperator_DEPTHWISE_CONV_2D] = DepthwiseConv2D;
  t.builtin[tfl::BuiltinOperator_TRANSPOSE_CONV] = TransposeConv;
  t.builtin[tfl::BuiltinOperator_MAX_POOL_2D] = Pool2D;
  t.builtin[tfl::BuiltinOperator_AVERAGE_POOL_2D] = Pool2D;
  t.builtin[tfl::BuiltinOperator_L2_POOL_2D] = Pool2D;
  t.builtin[tfl::BuiltinOperator_FULLY_CONNECTED] = FullyConnected;
  t.builtin[tfl::BuiltinOperator_BATCH_MATMUL] = BatchMatMul;
  t.builtin[tfl::BuiltinOperator_RESIZE_BILINEAR] = Resize;
  t.builtin[tfl::BuiltinOperator_RESIZE_NEAREST_NEIGHBOR] = Resize;
  t.builtin[tfl::BuiltinOperator_DEPTH_TO_SPACE] = DepthToSpace;
  t.builtin[tfl::BuiltinOperator_SPACE_TO_DEPTH] = SpaceToDepth;
  t.custom["Convolution2DTransposeBias"] = Convolution2DTransposeBias;
  t.custom["MaxPoolingWithArgmax2D"] = MaxPoolingWithArgmax2D;
  t.custom["MaxUnpooling2D"] = MaxUnpooling2D;
}

}  // namespace gpuclean::ir::shapes
