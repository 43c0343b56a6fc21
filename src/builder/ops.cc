// GraphBuilder's typed op methods: each turns plain attribute values into
// the options table and constant inputs a converter would write, then adds
// the op through Op() / Custom().
#include <fmt/format.h>

#include <type_traits>

#include "gpuclean/builder.h"
#include "gpuclean/error.h"

namespace gpuclean::builder {
namespace {

// The options type of each op's row in the op table, as a type: OPTIONS
// names a schema table (tfl::<OPTIONS>T) or NoOptions.
namespace options_of_row {
using namespace tfl;
struct NoOptionsT {};
}  // namespace options_of_row

// Converters attach the options table of ops whose table has no fields;
// doing the same keeps our graphs indistinguishable from converted ones.
// Tables with fields are filled by the op's own method below.
template <typename T>
tfl::BuiltinOptionsUnion FieldlessOptions() {
  if constexpr (std::is_empty_v<T> && !std::is_same_v<T, options_of_row::NoOptionsT>) return Options(T{});
  return {};
}

tfl::BuiltinOptionsUnion EmptyOptionsFor(tfl::BuiltinOperator code) {
  switch (code) {
#define GPUCLEAN_OP(CODE, FAMILY, RANK_RULE, KERNEL, FLAGS, OPTIONS, VERSION) \
  case tfl::BuiltinOperator_##CODE:                                           \
    return FieldlessOptions<options_of_row::OPTIONS##T>();
#include "ir/ops.def"
#undef GPUCLEAN_OP
    default: return {};
  }
}

template <typename T>
tfl::BuiltinOptionsUnion WithActivation(Activation act) {
  T options;
  options.fused_activation_function = act;
  return Options(std::move(options));
}

std::vector<int32_t> FlattenPaddings(const Paddings& paddings) {
  std::vector<int32_t> flat;
  for (const auto& [before, after] : paddings) {
    flat.push_back(before);
    flat.push_back(after);
  }
  return flat;
}

}  // namespace

// ---------------------------------------------------------------- elementwise

int GraphBuilder::Unary(tfl::BuiltinOperator code, int x) { return Single(code, {x}, EmptyOptionsFor(code)); }

int GraphBuilder::Binary(tfl::BuiltinOperator code, int a, int b) {
  switch (code) {
    case tfl::BuiltinOperator_ADD: return Add(a, b);
    case tfl::BuiltinOperator_SUB: return Sub(a, b);
    case tfl::BuiltinOperator_MUL: return Mul(a, b);
    case tfl::BuiltinOperator_DIV: return Div(a, b);
    default: return Single(code, {a, b}, EmptyOptionsFor(code));
  }
}

int GraphBuilder::Add(int a, int b, Activation act) {
  return Single(tfl::BuiltinOperator_ADD, {a, b}, WithActivation<tfl::AddOptionsT>(act));
}
int GraphBuilder::Sub(int a, int b, Activation act) {
  return Single(tfl::BuiltinOperator_SUB, {a, b}, WithActivation<tfl::SubOptionsT>(act));
}
int GraphBuilder::Mul(int a, int b, Activation act) {
  return Single(tfl::BuiltinOperator_MUL, {a, b}, WithActivation<tfl::MulOptionsT>(act));
}
int GraphBuilder::Div(int a, int b, Activation act) {
  return Single(tfl::BuiltinOperator_DIV, {a, b}, WithActivation<tfl::DivOptionsT>(act));
}

int GraphBuilder::LeakyRelu(int x, float alpha) {
  tfl::LeakyReluOptionsT o;
  o.alpha = alpha;
  return Single(tfl::BuiltinOperator_LEAKY_RELU, {x}, Options(o));
}

int GraphBuilder::Prelu(int x, int alpha) { return Single(tfl::BuiltinOperator_PRELU, {x, alpha}); }

int GraphBuilder::Gelu(int x, bool approximate) {
  tfl::GeluOptionsT o;
  o.approximate = approximate;
  return Single(tfl::BuiltinOperator_GELU, {x}, Options(o));
}

int GraphBuilder::Select(int condition, int x, int y) {
  return Single(tfl::BuiltinOperator_SELECT, {condition, x, y}, Options(tfl::SelectOptionsT{}));
}

int GraphBuilder::SelectV2(int condition, int x, int y) {
  return Single(tfl::BuiltinOperator_SELECT_V2, {condition, x, y}, Options(tfl::SelectV2OptionsT{}));
}

int GraphBuilder::Cast(int x, DType to) {
  CheckTensor(x, "CAST input");
  tfl::CastOptionsT o;
  o.in_data_type = tensor(x).dtype;
  o.out_data_type = to;
  return Single(tfl::BuiltinOperator_CAST, {x}, Options(o));
}

int GraphBuilder::Dequantize(int x) { return Single(tfl::BuiltinOperator_DEQUANTIZE, {x}); }

int GraphBuilder::Quantize(int x, DType dtype, float scale, int64_t zero_point) {
  CheckTensor(x, "QUANTIZE input");
  ir::Op op;
  op.code = tfl::BuiltinOperator_QUANTIZE;
  op.inputs = {x};
  op.options = Options(tfl::QuantizeOptionsT{});
  ir::Tensor out;
  out.name = NextOpName(op.name());
  out.dtype = dtype;
  out.shape = tensor(x).shape;
  out.quant.scale = {scale};
  out.quant.zero_point = {zero_point};
  op.outputs.push_back(graph_.AddTensor(std::move(out)));
  op.version = DefaultOpVersion(graph_, op);
  const int result = op.outputs[0];
  graph_.AddOp(std::move(op));
  return result;
}

int GraphBuilder::Densify(int sparse_constant) {
  CheckTensor(sparse_constant, "DENSIFY input");
  if (!tensor(sparse_constant).sparsity)
    ThrowBadInput(fmt::format("DENSIFY input '{}' is not a sparse constant", tensor(sparse_constant).name));
  return Single(tfl::BuiltinOperator_DENSIFY, {sparse_constant}, Options(tfl::DensifyOptionsT{}));
}

// ---------------------------------------------------------------- conv / matmul

// LiteRT's CONV_2D insists on a bias and DEPTHWISE_CONV_2D refuses an
// omitted (-1) one, so a float convolution without bias gets zeros, as
// converters write it.
int GraphBuilder::ZeroBias(tfl::BuiltinOperator code, int x, int filter, int channel_dim) {
  CheckTensor(x, "convolution input");
  CheckTensor(filter, "convolution filter");
  if (tensor(x).dtype != tfl::TensorType_FLOAT32 || shape(filter).size() != 4) return kNoInput;
  const int32_t channels = shape(filter)[channel_dim];
  return ConstF32(NextOpName(ir::BuiltinName(code)) + "/zero_bias", {channels}, std::vector<float>(channels, 0.0f));
}

int GraphBuilder::Conv2D(int x, int filter, int bias, tfl::Padding padding, int stride_w, int stride_h, Activation act,
                         int dilation_w, int dilation_h) {
  tfl::Conv2DOptionsT o;
  o.padding = padding;
  o.stride_w = stride_w;
  o.stride_h = stride_h;
  o.fused_activation_function = act;
  o.dilation_w_factor = dilation_w;
  o.dilation_h_factor = dilation_h;
  if (bias == kNoInput) bias = ZeroBias(tfl::BuiltinOperator_CONV_2D, x, filter, 0);
  return Single(tfl::BuiltinOperator_CONV_2D, {x, filter, bias}, Options(o));
}

int GraphBuilder::DepthwiseConv2D(int x, int filter, int bias, tfl::Padding padding, int stride_w, int stride_h,
                                  Activation act, int dilation_w, int dilation_h) {
  CheckTensor(x, "DEPTHWISE_CONV_2D input");
  CheckTensor(filter, "DEPTHWISE_CONV_2D filter");
  tfl::DepthwiseConv2DOptionsT o;
  o.padding = padding;
  o.stride_w = stride_w;
  o.stride_h = stride_h;
  o.fused_activation_function = act;
  o.dilation_w_factor = dilation_w;
  o.dilation_h_factor = dilation_h;
  // Written for older readers; shape inference checks the shapes agree.
  const int32_t in_channels = shape(x).size() == 4 ? shape(x)[3] : 0;
  const int32_t out_channels = shape(filter).size() == 4 ? shape(filter)[3] : 0;
  o.depth_multiplier = in_channels > 0 ? out_channels / in_channels : 1;
  if (bias == kNoInput) bias = ZeroBias(tfl::BuiltinOperator_DEPTHWISE_CONV_2D, x, filter, 3);
  return Single(tfl::BuiltinOperator_DEPTHWISE_CONV_2D, {x, filter, bias}, Options(o));
}

int GraphBuilder::TransposeConv(int x, int weights, int bias, const Shape& output_shape, tfl::Padding padding,
                                int stride_w, int stride_h, Activation act) {
  tfl::TransposeConvOptionsT o;
  o.padding = padding;
  o.stride_w = stride_w;
  o.stride_h = stride_h;
  o.fused_activation_function = act;
  const int shape_tensor = AttributeConst(tfl::BuiltinOperator_TRANSPOSE_CONV, "output_shape", output_shape);
  std::vector<int> inputs = {shape_tensor, weights, x};
  if (bias != kNoInput) inputs.push_back(bias);
  return Single(tfl::BuiltinOperator_TRANSPOSE_CONV, inputs, Options(o));
}

int GraphBuilder::FullyConnected(int x, int weights, int bias, Activation act, bool keep_num_dims) {
  tfl::FullyConnectedOptionsT o;
  o.fused_activation_function = act;
  o.keep_num_dims = keep_num_dims;
  return Single(tfl::BuiltinOperator_FULLY_CONNECTED, {x, weights, bias}, Options(o));
}

int GraphBuilder::BatchMatMul(int a, int b, bool adj_x, bool adj_y) {
  tfl::BatchMatMulOptionsT o;
  o.adj_x = adj_x;
  o.adj_y = adj_y;
  return Single(tfl::BuiltinOperator_BATCH_MATMUL, {a, b}, Options(o));
}

namespace {
tfl::BuiltinOptionsUnion PoolOptions(tfl::Padding padding, int stride_w, int stride_h, int filter_w, int filter_h,
                                     Activation act) {
  tfl::Pool2DOptionsT o;
  o.padding = padding;
  o.stride_w = stride_w;
  o.stride_h = stride_h;
  o.filter_width = filter_w;
  o.filter_height = filter_h;
  o.fused_activation_function = act;
  return Options(o);
}
}  // namespace

int GraphBuilder::MaxPool2D(int x, tfl::Padding padding, int stride_w, int stride_h, int filter_w, int filter_h,
                            Activation act) {
  return Single(tfl::BuiltinOperator_MAX_POOL_2D, {x},
                PoolOptions(padding, stride_w, stride_h, filter_w, filter_h, act));
}

int GraphBuilder::AveragePool2D(int x, tfl::Padding padding, int stride_w, int stride_h, int filter_w, int filter_h,
                                Activation act) {
  return Single(tfl::BuiltinOperator_AVERAGE_POOL_2D, {x},
                PoolOptions(padding, stride_w, stride_h, filter_w, filter_h, act));
}

// ---------------------------------------------------------------- reductions

int GraphBuilder::Reduce(tfl::BuiltinOperator code, int x, const std::vector<int32_t>& axes, bool keep_dims) {
  tfl::ReducerOptionsT o;
  o.keep_dims = keep_dims;
  return Single(code, {x, AttributeConst(code, "axis", axes)}, Options(o));
}

int GraphBuilder::Softmax(int x, float beta) {
  tfl::SoftmaxOptionsT o;
  o.beta = beta;
  return Single(tfl::BuiltinOperator_SOFTMAX, {x}, Options(o));
}

int GraphBuilder::LogSoftmax(int x) {
  return Single(tfl::BuiltinOperator_LOG_SOFTMAX, {x}, Options(tfl::LogSoftmaxOptionsT{}));
}

int GraphBuilder::L2Normalization(int x, Activation act) {
  return Single(tfl::BuiltinOperator_L2_NORMALIZATION, {x}, WithActivation<tfl::L2NormOptionsT>(act));
}

int GraphBuilder::ArgMax(int x, int32_t axis, DType output_type) {
  tfl::ArgMaxOptionsT o;
  o.output_type = output_type;
  return Single(tfl::BuiltinOperator_ARG_MAX, {x, AttributeConst(tfl::BuiltinOperator_ARG_MAX, "axis", {axis})},
                Options(o));
}

int GraphBuilder::ArgMin(int x, int32_t axis, DType output_type) {
  tfl::ArgMinOptionsT o;
  o.output_type = output_type;
  return Single(tfl::BuiltinOperator_ARG_MIN, {x, AttributeConst(tfl::BuiltinOperator_ARG_MIN, "axis", {axis})},
                Options(o));
}

std::pair<int, int> GraphBuilder::TopKV2(int x, int32_t k) {
  const int k_tensor = AttributeConst(tfl::BuiltinOperator_TOPK_V2, "k", {k}, {});
  std::vector<int> out = Op(tfl::BuiltinOperator_TOPK_V2, {x, k_tensor}, Options(tfl::TopKV2OptionsT{}));
  return {out.at(0), out.at(1)};
}

std::pair<int, int> GraphBuilder::NonMaxSuppressionV4(int boxes, int scores, int32_t max_output, float iou_threshold,
                                                      float score_threshold) {
  constexpr auto kCode = tfl::BuiltinOperator_NON_MAX_SUPPRESSION_V4;
  const int max_tensor = AttributeConst(kCode, "max_output_size", {max_output}, {});
  const int iou = ConstF32("iou_threshold", {}, {iou_threshold});
  const int score = ConstF32("score_threshold", {}, {score_threshold});
  std::vector<int> out =
      Op(kCode, {boxes, scores, max_tensor, iou, score}, Options(tfl::NonMaxSuppressionV4OptionsT{}));
  return {out.at(0), out.at(1)};
}

int GraphBuilder::Cumsum(int x, int32_t axis, bool exclusive, bool reverse) {
  tfl::CumsumOptionsT o;
  o.exclusive = exclusive;
  o.reverse = reverse;
  return Single(tfl::BuiltinOperator_CUMSUM, {x, AttributeConst(tfl::BuiltinOperator_CUMSUM, "axis", {axis}, {})},
                Options(o));
}

// ---------------------------------------------------------------- layout

int GraphBuilder::Reshape(int x, const Shape& new_shape) {
  tfl::ReshapeOptionsT o;
  o.new_shape = new_shape;
  // A scalar target would need an empty shape tensor, which the format cannot
  // store as a constant; LiteRT reads a missing new_shape as a scalar.
  if (new_shape.empty()) return Single(tfl::BuiltinOperator_RESHAPE, {x}, Options(o));
  return Single(tfl::BuiltinOperator_RESHAPE, {x, AttributeConst(tfl::BuiltinOperator_RESHAPE, "shape", new_shape)},
                Options(o));
}

int GraphBuilder::Squeeze(int x, const std::vector<int32_t>& dims) {
  tfl::SqueezeOptionsT o;
  o.squeeze_dims = dims;
  return Single(tfl::BuiltinOperator_SQUEEZE, {x}, Options(o));
}

int GraphBuilder::ExpandDims(int x, int32_t axis) {
  return Single(tfl::BuiltinOperator_EXPAND_DIMS,
                {x, AttributeConst(tfl::BuiltinOperator_EXPAND_DIMS, "axis", {axis}, {})},
                Options(tfl::ExpandDimsOptionsT{}));
}

int GraphBuilder::Transpose(int x, const std::vector<int32_t>& perm) {
  return Single(tfl::BuiltinOperator_TRANSPOSE, {x, AttributeConst(tfl::BuiltinOperator_TRANSPOSE, "perm", perm)},
                Options(tfl::TransposeOptionsT{}));
}

int GraphBuilder::Concatenation(const std::vector<int>& inputs, int32_t axis, Activation act) {
  tfl::ConcatenationOptionsT o;
  o.axis = axis;
  o.fused_activation_function = act;
  return Single(tfl::BuiltinOperator_CONCATENATION, inputs, Options(o));
}

int GraphBuilder::Slice(int x, const std::vector<int32_t>& begin, const std::vector<int32_t>& size) {
  const int begin_tensor = AttributeConst(tfl::BuiltinOperator_SLICE, "begin", begin);
  const int size_tensor = AttributeConst(tfl::BuiltinOperator_SLICE, "size", size);
  return Single(tfl::BuiltinOperator_SLICE, {x, begin_tensor, size_tensor}, Options(tfl::SliceOptionsT{}));
}

int GraphBuilder::StridedSlice(int x, const std::vector<int32_t>& begin, const std::vector<int32_t>& end,
                               const std::vector<int32_t>& strides, const StridedSliceMasks& masks) {
  tfl::StridedSliceOptionsT o;
  o.begin_mask = masks.begin;
  o.end_mask = masks.end;
  o.ellipsis_mask = masks.ellipsis;
  o.new_axis_mask = masks.new_axis;
  o.shrink_axis_mask = masks.shrink_axis;
  o.offset = masks.offset;
  constexpr auto kCode = tfl::BuiltinOperator_STRIDED_SLICE;
  const int begin_tensor = AttributeConst(kCode, "begin", begin);
  const int end_tensor = AttributeConst(kCode, "end", end);
  const int strides_tensor = AttributeConst(kCode, "strides", strides);
  return Single(kCode, {x, begin_tensor, end_tensor, strides_tensor}, Options(o));
}

int GraphBuilder::Pad(int x, const Paddings& paddings) {
  const int pads = AttributeConst(tfl::BuiltinOperator_PAD, "paddings", FlattenPaddings(paddings),
                                  {static_cast<int32_t>(paddings.size()), 2});
  return Single(tfl::BuiltinOperator_PAD, {x, pads}, Options(tfl::PadOptionsT{}));
}

int GraphBuilder::PadV2(int x, const Paddings& paddings, float value) {
  CheckTensor(x, "PADV2 input");
  constexpr auto kCode = tfl::BuiltinOperator_PADV2;
  const int pads =
      AttributeConst(kCode, "paddings", FlattenPaddings(paddings), {static_cast<int32_t>(paddings.size()), 2});
  const std::string value_name = NextOpName(ir::BuiltinName(kCode)) + "/constant_values";
  int constant;
  switch (tensor(x).dtype) {
    case tfl::TensorType_FLOAT32: constant = ConstF32(value_name, {}, {value}); break;
    case tfl::TensorType_INT32: constant = ConstI32(value_name, {}, {static_cast<int32_t>(value)}); break;
    default:
      ThrowBadInput(fmt::format("PadV2 builds constant_values for float32 or int32 inputs, not {}",
                                ir::DTypeName(tensor(x).dtype)));
  }
  return Single(kCode, {x, pads, constant}, Options(tfl::PadV2OptionsT{}));
}

int GraphBuilder::MirrorPad(int x, const Paddings& paddings, tfl::MirrorPadMode mode) {
  tfl::MirrorPadOptionsT o;
  o.mode = mode;
  const int pads = AttributeConst(tfl::BuiltinOperator_MIRROR_PAD, "paddings", FlattenPaddings(paddings),
                                  {static_cast<int32_t>(paddings.size()), 2});
  return Single(tfl::BuiltinOperator_MIRROR_PAD, {x, pads}, Options(o));
}

std::vector<int> GraphBuilder::Split(int x, int32_t axis, int32_t num_splits) {
  tfl::SplitOptionsT o;
  o.num_splits = num_splits;
  const int axis_tensor = AttributeConst(tfl::BuiltinOperator_SPLIT, "axis", {axis}, {});
  return Op(tfl::BuiltinOperator_SPLIT, {axis_tensor, x}, Options(o));
}

std::vector<int> GraphBuilder::SplitV(int x, const std::vector<int32_t>& sizes, int32_t axis) {
  tfl::SplitVOptionsT o;
  o.num_splits = static_cast<int32_t>(sizes.size());
  const int sizes_tensor = AttributeConst(tfl::BuiltinOperator_SPLIT_V, "size_splits", sizes);
  const int axis_tensor = AttributeConst(tfl::BuiltinOperator_SPLIT_V, "axis", {axis}, {});
  return Op(tfl::BuiltinOperator_SPLIT_V, {x, sizes_tensor, axis_tensor}, Options(o));
}

int GraphBuilder::Pack(const std::vector<int>& inputs, int32_t axis) {
  tfl::PackOptionsT o;
  o.values_count = static_cast<int32_t>(inputs.size());
  o.axis = axis;
  return Single(tfl::BuiltinOperator_PACK, inputs, Options(o));
}

std::vector<int> GraphBuilder::Unpack(int x, int32_t axis) {
  CheckTensor(x, "UNPACK input");
  tfl::UnpackOptionsT o;
  o.axis = axis;
  const int rank = static_cast<int>(shape(x).size());
  o.num = shape(x).at(ir::NormalizeAxis(axis, rank, "UNPACK"));
  return Op(tfl::BuiltinOperator_UNPACK, {x}, Options(o));
}

int GraphBuilder::Tile(int x, const std::vector<int32_t>& multiples) {
  return Single(tfl::BuiltinOperator_TILE, {x, AttributeConst(tfl::BuiltinOperator_TILE, "multiples", multiples)},
                Options(tfl::TileOptionsT{}));
}

int GraphBuilder::BroadcastTo(int x, const Shape& target) {
  return Single(tfl::BuiltinOperator_BROADCAST_TO,
                {x, AttributeConst(tfl::BuiltinOperator_BROADCAST_TO, "shape", target)},
                Options(tfl::BroadcastToOptionsT{}));
}

int GraphBuilder::Gather(int params, int indices, int32_t axis, int32_t batch_dims) {
  tfl::GatherOptionsT o;
  o.axis = axis;
  o.batch_dims = batch_dims;
  return Single(tfl::BuiltinOperator_GATHER, {params, indices}, Options(o));
}

int GraphBuilder::GatherNd(int params, int indices) {
  return Single(tfl::BuiltinOperator_GATHER_ND, {params, indices}, Options(tfl::GatherNdOptionsT{}));
}

int GraphBuilder::ResizeBilinear(int x, int32_t height, int32_t width, bool align_corners, bool half_pixel_centers) {
  tfl::ResizeBilinearOptionsT o;
  o.align_corners = align_corners;
  o.half_pixel_centers = half_pixel_centers;
  return Single(tfl::BuiltinOperator_RESIZE_BILINEAR,
                {x, AttributeConst(tfl::BuiltinOperator_RESIZE_BILINEAR, "size", {height, width})}, Options(o));
}

int GraphBuilder::ResizeNearestNeighbor(int x, int32_t height, int32_t width, bool align_corners,
                                        bool half_pixel_centers) {
  tfl::ResizeNearestNeighborOptionsT o;
  o.align_corners = align_corners;
  o.half_pixel_centers = half_pixel_centers;
  return Single(tfl::BuiltinOperator_RESIZE_NEAREST_NEIGHBOR,
                {x, AttributeConst(tfl::BuiltinOperator_RESIZE_NEAREST_NEIGHBOR, "size", {height, width})}, Options(o));
}

int GraphBuilder::DepthToSpace(int x, int32_t block_size) {
  tfl::DepthToSpaceOptionsT o;
  o.block_size = block_size;
  return Single(tfl::BuiltinOperator_DEPTH_TO_SPACE, {x}, Options(o));
}

int GraphBuilder::SpaceToDepth(int x, int32_t block_size) {
  tfl::SpaceToDepthOptionsT o;
  o.block_size = block_size;
  return Single(tfl::BuiltinOperator_SPACE_TO_DEPTH, {x}, Options(o));
}

// ---------------------------------------------------------------- MediaPipe custom ops

int GraphBuilder::Convolution2DTransposeBias(int x, int weights, int bias, tfl::Padding padding, int stride_w,
                                             int stride_h) {
  const auto options = ir::EncodeMediaPipeOptions(ir::MediaPipeTransposeConvOptions{padding, stride_w, stride_h});
  return Custom("Convolution2DTransposeBias", {x, weights, bias}, options).at(0);
}

std::pair<int, int> GraphBuilder::MaxPoolingWithArgmax2D(int x, tfl::Padding padding, int stride_w, int stride_h,
                                                         int filter_w, int filter_h) {
  const auto options = ir::EncodeMediaPipeOptions(
      ir::MediaPipePoolOptions{padding, stride_w, stride_h, filter_w, filter_h, kNoActivation});
  std::vector<int> out = Custom("MaxPoolingWithArgmax2D", {x}, options);
  return {out.at(0), out.at(1)};
}

int GraphBuilder::MaxUnpooling2D(int x, int indices, tfl::Padding padding, int stride_w, int stride_h, int filter_w,
                                 int filter_h) {
  const auto options = ir::EncodeMediaPipeOptions(
      ir::MediaPipePoolOptions{padding, stride_w, stride_h, filter_w, filter_h, kNoActivation});
  return Custom("MaxUnpooling2D", {x, indices}, options).at(0);
}

}  // namespace gpuclean::builder
