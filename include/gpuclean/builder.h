#pragma once
// The model builder: synthesises graphs (single-op probes, patterns, test
// models) that LiteRT loads as any converted model. Every op's outputs are
// shaped and typed by ir::InferOutputs, so an inconsistent graph fails where
// it is built, with the shape rule's message, not later in a runtime.
//
//   builder::GraphBuilder b;
//   int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 8, 8, 3});
//   int w = b.ConstF32("w", {4, 3, 3, 3}, weights);
//   int y = b.Conv2D(x, w, builder::kNoInput, tfl::Padding_SAME, 2, 2, tfl::ActivationFunctionType_RELU);
//   b.Output(b.Softmax(b.Reshape(y, {1, -1}), 1.0f));
//   ir::Model model = b.Finish();
//
// Typed methods take attribute values (axes, shapes, paddings) as plain
// vectors and store them as int32 constants, as converters do; use Op()
// directly to feed such inputs from other tensors.
#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "gpuclean/bytes.h"
#include "gpuclean/ir.h"
#include "gpuclean/shapes.h"

namespace gpuclean::builder {

namespace tfl = ::gpuclean::tfl;
using ir::DType;
using ir::TensorSpec;
using Shape = std::vector<int32_t>;
using Activation = tfl::ActivationFunctionType;
constexpr Activation kNoActivation = tfl::ActivationFunctionType_NONE;

// An omitted optional input (a convolution without bias).
constexpr int kNoInput = -1;
// Op(): pick the lowest operator version that covers the features used
// (LiteRT refuses versions it does not register, e.g. BROADCAST_TO v1).
constexpr int kAutoVersion = 0;

// Wraps one options table into the union Op() takes.
template <typename T>
tfl::BuiltinOptionsUnion Options(T table) {
  tfl::BuiltinOptionsUnion options;
  options.Set(std::move(table));
  return options;
}

struct StridedSliceMasks {
  int32_t begin = 0;
  int32_t end = 0;
  int32_t ellipsis = 0;
  int32_t new_axis = 0;
  int32_t shrink_axis = 0;
  bool offset = false;  // `end` holds lengths from `begin`
};

// (before, after) per dimension.
using Paddings = std::vector<std::array<int32_t, 2>>;

class GraphBuilder {
 public:
  explicit GraphBuilder(std::string graph_name = "main");
  // Continues an existing graph (rewrite passes): typed methods append ops to
  // it; new tensors are named "<name_prefix><op>_<n>" so they cannot collide
  // with the graph's own names. Release() hands the graph back unvalidated.
  static GraphBuilder Extend(ir::Subgraph graph, std::string name_prefix);
  ir::Subgraph Release();
  // Direct access for edits the typed methods do not cover (new constant
  // values, options of an existing op).
  ir::Subgraph& mutable_graph() { return graph_; }

  // ---------------------------------------------------------- tensors
  int Input(std::string name, DType dtype, Shape shape);
  // `data` must hold exactly the elements of `shape`.
  int Const(std::string name, DType dtype, Shape shape, Bytes data);
  int ConstF32(std::string name, Shape shape, const std::vector<float>& values);
  int ConstI32(std::string name, Shape shape, const std::vector<int32_t>& values);
  int ConstBool(std::string name, Shape shape, const std::vector<bool>& values);
  // Stores binary16 bits (round to nearest even), as fp16-weight models do.
  int ConstF16FromF32(std::string name, Shape shape, const std::vector<float>& values);
  // Per-tensor int8 quantisation: real = scale * (q - zero_point).
  int ConstInt8(std::string name, Shape shape, const std::vector<int8_t>& values, float scale, int64_t zero_point);
  // Symmetric per-channel int8 quantisation along `axis` (zero points 0).
  int ConstInt8PerChannel(std::string name, Shape shape, const std::vector<int8_t>& values,
                          const std::vector<float>& scales, int32_t axis);
  // A 2-D float32 constant stored sparse (rows dense, columns CSR; zeros are
  // dropped), the input DENSIFY expects.
  int ConstSparseF32(std::string name, Shape shape, const std::vector<float>& dense_values);

  void Output(int tensor);

  const ir::Subgraph& graph() const { return graph_; }
  const ir::Tensor& tensor(int index) const { return graph_.tensors.at(index); }
  const Shape& shape(int index) const { return tensor(index).shape; }

  // ---------------------------------------------------------- generic ops
  // Adds a builtin op; its outputs are new tensors shaped by InferOutputs and
  // named "<op>_<n>" (":k" for output k > 0). Returns their indices.
  std::vector<int> Op(tfl::BuiltinOperator code, std::vector<int> inputs, tfl::BuiltinOptionsUnion options = {},
                      int version = kAutoVersion);
  // Adds a custom op with the given outputs.
  std::vector<int> Custom(const std::string& code, std::vector<int> inputs, std::vector<uint8_t> custom_options,
                          const std::vector<TensorSpec>& outputs);
  // Adds a custom op InferOutputs knows (the MediaPipe ops).
  std::vector<int> Custom(const std::string& code, std::vector<int> inputs, std::vector<uint8_t> custom_options);

  // ---------------------------------------------------------- elementwise
  int Unary(tfl::BuiltinOperator code, int x);
  int Binary(tfl::BuiltinOperator code, int a, int b);
  int Add(int a, int b, Activation act = kNoActivation);
  int Sub(int a, int b, Activation act = kNoActivation);
  int Mul(int a, int b, Activation act = kNoActivation);
  int Div(int a, int b, Activation act = kNoActivation);
  int SquaredDifference(int a, int b) { return Binary(tfl::BuiltinOperator_SQUARED_DIFFERENCE, a, b); }
  int Maximum(int a, int b) { return Binary(tfl::BuiltinOperator_MAXIMUM, a, b); }
  int Minimum(int a, int b) { return Binary(tfl::BuiltinOperator_MINIMUM, a, b); }
  int Pow(int a, int b) { return Binary(tfl::BuiltinOperator_POW, a, b); }
  int FloorDiv(int a, int b) { return Binary(tfl::BuiltinOperator_FLOOR_DIV, a, b); }

  int Abs(int x) { return Unary(tfl::BuiltinOperator_ABS, x); }
  int Neg(int x) { return Unary(tfl::BuiltinOperator_NEG, x); }
  int Exp(int x) { return Unary(tfl::BuiltinOperator_EXP, x); }
  int Log(int x) { return Unary(tfl::BuiltinOperator_LOG, x); }
  int Sqrt(int x) { return Unary(tfl::BuiltinOperator_SQRT, x); }
  int Rsqrt(int x) { return Unary(tfl::BuiltinOperator_RSQRT, x); }
  int Square(int x) { return Unary(tfl::BuiltinOperator_SQUARE, x); }
  int Sin(int x) { return Unary(tfl::BuiltinOperator_SIN, x); }
  int Round(int x) { return Unary(tfl::BuiltinOperator_ROUND, x); }
  int Cos(int x) { return Unary(tfl::BuiltinOperator_COS, x); }
  int Floor(int x) { return Unary(tfl::BuiltinOperator_FLOOR, x); }
  int Ceil(int x) { return Unary(tfl::BuiltinOperator_CEIL, x); }
  int Tanh(int x) { return Unary(tfl::BuiltinOperator_TANH, x); }
  int Logistic(int x) { return Unary(tfl::BuiltinOperator_LOGISTIC, x); }
  int Relu(int x) { return Unary(tfl::BuiltinOperator_RELU, x); }
  int Relu6(int x) { return Unary(tfl::BuiltinOperator_RELU6, x); }
  int ReluN1To1(int x) { return Unary(tfl::BuiltinOperator_RELU_N1_TO_1, x); }
  int Relu0To1(int x) { return Unary(tfl::BuiltinOperator_RELU_0_TO_1, x); }
  int Elu(int x) { return Unary(tfl::BuiltinOperator_ELU, x); }
  int HardSwish(int x) { return Unary(tfl::BuiltinOperator_HARD_SWISH, x); }
  int LeakyRelu(int x, float alpha);
  int Prelu(int x, int alpha);
  int Gelu(int x, bool approximate);

  int Equal(int a, int b) { return Binary(tfl::BuiltinOperator_EQUAL, a, b); }
  int NotEqual(int a, int b) { return Binary(tfl::BuiltinOperator_NOT_EQUAL, a, b); }
  int Less(int a, int b) { return Binary(tfl::BuiltinOperator_LESS, a, b); }
  int LessEqual(int a, int b) { return Binary(tfl::BuiltinOperator_LESS_EQUAL, a, b); }
  int Greater(int a, int b) { return Binary(tfl::BuiltinOperator_GREATER, a, b); }
  int GreaterEqual(int a, int b) { return Binary(tfl::BuiltinOperator_GREATER_EQUAL, a, b); }
  int LogicalAnd(int a, int b) { return Binary(tfl::BuiltinOperator_LOGICAL_AND, a, b); }
  int LogicalOr(int a, int b) { return Binary(tfl::BuiltinOperator_LOGICAL_OR, a, b); }
  int LogicalNot(int x) { return Unary(tfl::BuiltinOperator_LOGICAL_NOT, x); }
  int Select(int condition, int x, int y);
  int SelectV2(int condition, int x, int y);
  int Cast(int x, DType to);
  int Dequantize(int x);
  // QUANTIZE of a float32 tensor to `dtype` (int8, uint8, int16) with one
  // scale and zero point, which the output carries.
  int Quantize(int x, DType dtype, float scale, int64_t zero_point);
  int Densify(int sparse_constant);

  // ---------------------------------------------------------- conv / matmul
  // filter [O, KH, KW, I]; bias [O], or kNoInput for a zero bias (LiteRT's
  // convolutions do not run without one).
  int Conv2D(int x, int filter, int bias, tfl::Padding padding, int stride_w, int stride_h,
             Activation act = kNoActivation, int dilation_w = 1, int dilation_h = 1);
  // filter [1, KH, KW, I * multiplier]; the multiplier follows from the
  // shapes. Bias as for Conv2D.
  int DepthwiseConv2D(int x, int filter, int bias, tfl::Padding padding, int stride_w, int stride_h,
                      Activation act = kNoActivation, int dilation_w = 1, int dilation_h = 1);
  // weights [O, KH, KW, I]; output_shape is NHWC.
  int TransposeConv(int x, int weights, int bias, const Shape& output_shape, tfl::Padding padding, int stride_w,
                    int stride_h, Activation act = kNoActivation);
  // weights [O, K]; bias [O] or kNoInput (LiteRT runs FULLY_CONNECTED without one).
  int FullyConnected(int x, int weights, int bias, Activation act = kNoActivation, bool keep_num_dims = false);
  int BatchMatMul(int a, int b, bool adj_x = false, bool adj_y = false);
  int MaxPool2D(int x, tfl::Padding padding, int stride_w, int stride_h, int filter_w, int filter_h,
                Activation act = kNoActivation);
  int AveragePool2D(int x, tfl::Padding padding, int stride_w, int stride_h, int filter_w, int filter_h,
                    Activation act = kNoActivation);

  // ---------------------------------------------------------- reductions
  int Reduce(tfl::BuiltinOperator code, int x, const std::vector<int32_t>& axes, bool keep_dims);
  int Mean(int x, const std::vector<int32_t>& axes, bool keep_dims) {
    return Reduce(tfl::BuiltinOperator_MEAN, x, axes, keep_dims);
  }
  int Sum(int x, const std::vector<int32_t>& axes, bool keep_dims) {
    return Reduce(tfl::BuiltinOperator_SUM, x, axes, keep_dims);
  }
  int ReduceMax(int x, const std::vector<int32_t>& axes, bool keep_dims) {
    return Reduce(tfl::BuiltinOperator_REDUCE_MAX, x, axes, keep_dims);
  }
  int ReduceMin(int x, const std::vector<int32_t>& axes, bool keep_dims) {
    return Reduce(tfl::BuiltinOperator_REDUCE_MIN, x, axes, keep_dims);
  }
  int ReduceProd(int x, const std::vector<int32_t>& axes, bool keep_dims) {
    return Reduce(tfl::BuiltinOperator_REDUCE_PROD, x, axes, keep_dims);
  }
  int Softmax(int x, float beta = 1.0f);
  int LogSoftmax(int x);
  int L2Normalization(int x, Activation act = kNoActivation);
  int ArgMax(int x, int32_t axis, DType output_type = tfl::TensorType_INT32);
  int ArgMin(int x, int32_t axis, DType output_type = tfl::TensorType_INT32);
  // Returns {values, indices} of the k largest along the last dimension.
  std::pair<int, int> TopKV2(int x, int32_t k);
  // Boxes [N, 4] (two diagonal corners, y then x) and scores [N]: the indices
  // kept, padded with 0 to max_output, and how many are valid (int32 scalar).
  std::pair<int, int> NonMaxSuppressionV4(int boxes, int scores, int32_t max_output, float iou_threshold,
                                          float score_threshold);
  int Cumsum(int x, int32_t axis, bool exclusive = false, bool reverse = false);

  // ---------------------------------------------------------- layout
  // Stores the shape both as an input tensor and as the new_shape option.
  int Reshape(int x, const Shape& new_shape);
  int Squeeze(int x, const std::vector<int32_t>& dims = {});
  int ExpandDims(int x, int32_t axis);
  int Transpose(int x, const std::vector<int32_t>& perm);
  int Concatenation(const std::vector<int>& inputs, int32_t axis, Activation act = kNoActivation);
  int Slice(int x, const std::vector<int32_t>& begin, const std::vector<int32_t>& size);
  int StridedSlice(int x, const std::vector<int32_t>& begin, const std::vector<int32_t>& end,
                   const std::vector<int32_t>& strides, const StridedSliceMasks& masks = {});
  int Pad(int x, const Paddings& paddings);
  // Pads with `value`, stored as a constant of x's type (float32 or int32).
  int PadV2(int x, const Paddings& paddings, float value);
  int MirrorPad(int x, const Paddings& paddings, tfl::MirrorPadMode mode);
  std::vector<int> Split(int x, int32_t axis, int32_t num_splits);
  // One size may be -1 (the remainder).
  std::vector<int> SplitV(int x, const std::vector<int32_t>& sizes, int32_t axis);
  int Pack(const std::vector<int>& inputs, int32_t axis);
  std::vector<int> Unpack(int x, int32_t axis);
  int Tile(int x, const std::vector<int32_t>& multiples);
  int BroadcastTo(int x, const Shape& shape);
  int Gather(int params, int indices, int32_t axis, int32_t batch_dims = 0);
  int GatherNd(int params, int indices);
  int ResizeBilinear(int x, int32_t height, int32_t width, bool align_corners = false, bool half_pixel_centers = false);
  int ResizeNearestNeighbor(int x, int32_t height, int32_t width, bool align_corners = false,
                            bool half_pixel_centers = false);
  int DepthToSpace(int x, int32_t block_size);
  int SpaceToDepth(int x, int32_t block_size);

  // ---------------------------------------------------------- MediaPipe custom ops
  // weights [O, KH, KW, I], bias [O] (both float32).
  int Convolution2DTransposeBias(int x, int weights, int bias, tfl::Padding padding, int stride_w, int stride_h);
  // Returns {values, argmax indices}; both float32.
  std::pair<int, int> MaxPoolingWithArgmax2D(int x, tfl::Padding padding, int stride_w, int stride_h, int filter_w,
                                             int filter_h);
  int MaxUnpooling2D(int x, int indices, tfl::Padding padding, int stride_w, int stride_h, int filter_w, int filter_h);

  // ---------------------------------------------------------- finish
  // Validates and hands over the model; the builder is empty afterwards.
  ir::Model Finish();

 private:
  int Single(tfl::BuiltinOperator code, std::vector<int> inputs, tfl::BuiltinOptionsUnion options = {});
  // An int32 constant feeding the op about to be added, named after it
  // ("mean_3/axis"); a vector unless `shape` says otherwise.
  int AttributeConst(tfl::BuiltinOperator code, const std::string& role, const std::vector<int32_t>& values,
                     Shape shape);
  int AttributeConst(tfl::BuiltinOperator code, const std::string& role, const std::vector<int32_t>& values);
  // Name of the next op's first output: "conv_2d_4".
  std::string NextOpName(const std::string& op_name) const;
  // A zero float bias for a convolution's `filter` (channels along
  // `channel_dim`), or kNoInput when the input is not float32.
  int ZeroBias(tfl::BuiltinOperator code, int x, int filter, int channel_dim);
  void CheckTensor(int tensor, const char* what) const;

  ir::Subgraph graph_;
  std::string name_prefix_;
};

// A graph with one runtime float32 input per shape, the ops `make_op` adds
// (usually one), and the tensors it returns as the graph outputs.
using OpMaker = std::function<std::vector<int>(GraphBuilder& builder, const std::vector<int>& inputs)>;
ir::Model SingleOpGraph(const std::vector<Shape>& float_inputs, const OpMaker& make_op);
// The same for one builtin op fed only by the float inputs.
ir::Model SingleOpGraph(tfl::BuiltinOperator code, const std::vector<Shape>& float_inputs,
                        tfl::BuiltinOptionsUnion options = {});

// The operator version Op() picks for kAutoVersion.
int DefaultOpVersion(const ir::Subgraph& graph, const ir::Op& op);

}  // namespace gpuclean::builder
