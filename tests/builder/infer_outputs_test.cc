// ctest-labels: slow
// Shape inference (ir::InferOutputs and the helpers of shapes.h): the
// tricky rules one by one, the errors inconsistent inputs raise, and
// agreement with every tensor of the fixture models.
#include <gtest/gtest.h>

#include "gpuclean/builder.h"
#include "gpuclean/error.h"
#include "gpuclean/format.h"
#include "gpuclean/shapes.h"
#include "support/test_support.h"
#include "support/tflite_names.h"

namespace gpuclean {
namespace {

using builder::GraphBuilder;
using builder::Shape;
using ::gpuclean::testing::tflite_names::kF32;
using ::gpuclean::testing::tflite_names::kSame;
using ::gpuclean::testing::tflite_names::kValid;

// The message of the Error `f` throws, checking its kind; empty if none.
template <typename F>
std::string ErrorOfInferOutputs(F&& f, ErrorKind kind = ErrorKind::kBadInput) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(static_cast<int>(e.kind()), static_cast<int>(kind)) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error thrown";
  return "";
}

int Filter(GraphBuilder& b, const Shape& shape) {
  int64_t n = 1;
  for (int32_t d : shape) n *= d;
  return b.ConstF32("filter", shape, std::vector<float>(n, 0.5f));
}

// ---------------------------------------------------------------- windows

TEST(InferOutputs, ConvSamePaddingRoundsUpWithStride) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {1, 7, 8, 3});
  EXPECT_EQ(b.shape(b.Conv2D(x, Filter(b, {4, 3, 3, 3}), builder::kNoInput, kSame, 2, 2)), (Shape{1, 4, 4, 4}));
  EXPECT_EQ(b.shape(b.Conv2D(x, Filter(b, {4, 3, 3, 3}), builder::kNoInput, kSame, 3, 1)), (Shape{1, 7, 3, 4}));
  EXPECT_EQ(b.shape(b.Conv2D(x, Filter(b, {4, 3, 3, 3}), builder::kNoInput, kValid, 2, 2)), (Shape{1, 3, 3, 4}));
  // Dilation 2 makes the 3x3 filter span 5.
  EXPECT_EQ(
      b.shape(b.Conv2D(x, Filter(b, {4, 3, 3, 3}), builder::kNoInput, kValid, 1, 1, builder::kNoActivation, 2, 2)),
      (Shape{1, 3, 4, 4}));
}

TEST(InferOutputs, WindowPaddingPutsTheOddPixelAtTheEnd) {
  EXPECT_EQ(ir::WindowOutputSize(kSame, 8, 3, 2), 4);
  const ir::WindowPadding even = ir::ComputeWindowPadding(kSame, 8, 3, 2, 1, 4);  // total 1
  EXPECT_EQ(even.before, 0);
  EXPECT_EQ(even.after, 1);
  const ir::WindowPadding odd = ir::ComputeWindowPadding(kSame, 7, 3, 2, 1, 4);  // total 2
  EXPECT_EQ(odd.before, 1);
  EXPECT_EQ(odd.after, 1);
  const ir::WindowPadding dilated = ir::ComputeWindowPadding(kSame, 6, 3, 1, 3, 6);  // span 7: total 6
  EXPECT_EQ(dilated.before, 3);
  EXPECT_EQ(dilated.after, 3);
  EXPECT_EQ(ir::ComputeWindowPadding(kValid, 7, 3, 2, 1, 3).before, 0);
}

TEST(InferOutputs, ValidWindowLargerThanInputThrows) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {1, 4, 4, 2});
  const std::string message = ErrorOfInferOutputs([&] { b.MaxPool2D(x, kValid, 1, 1, 5, 5); });
  EXPECT_NE(message.find("MAX_POOL_2D"), std::string::npos) << message;
  EXPECT_NE(message.find("does not fit"), std::string::npos) << message;
  ErrorOfInferOutputs([&] { b.MaxPool2D(x, kSame, 0, 1, 2, 2); });  // zero stride
}

TEST(InferOutputs, ConvChannelsMustMatch) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {1, 8, 8, 3});
  const std::string message = ErrorOfInferOutputs([&] {
    b.Conv2D(x, Filter(b, {4, 3, 3, 2}), builder::kNoInput, kSame, 1, 1);
  });
  EXPECT_NE(message.find("not a multiple"), std::string::npos) << message;
  // A filter with a divisor of the channels is a grouped convolution.
  GraphBuilder g;
  const int y = g.Input("y", kF32, {1, 8, 8, 4});
  EXPECT_EQ(g.shape(g.Conv2D(y, Filter(g, {6, 3, 3, 2}), builder::kNoInput, kSame, 1, 1)), (Shape{1, 8, 8, 6}));
  ErrorOfInferOutputs([&] { g.Conv2D(y, Filter(g, {5, 3, 3, 2}), builder::kNoInput, kSame, 1, 1); });  // 5 % 2 groups
  ErrorOfInferOutputs([&] {
    g.Conv2D(y, Filter(g, {6, 3, 3, 4}), g.ConstF32("bias", {5}, std::vector<float>(5)), kSame, 1, 1);
  });
}

TEST(InferOutputs, DepthwiseMultiplierFollowsFromShapes) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {1, 9, 9, 3});
  EXPECT_EQ(b.shape(b.DepthwiseConv2D(x, Filter(b, {1, 3, 3, 6}), builder::kNoInput, kValid, 2, 2)),
            (Shape{1, 4, 4, 6}));
  ErrorOfInferOutputs([&] { b.DepthwiseConv2D(x, Filter(b, {1, 3, 3, 4}), builder::kNoInput, kSame, 1, 1); });
  ErrorOfInferOutputs([&] { b.DepthwiseConv2D(x, Filter(b, {2, 3, 3, 6}), builder::kNoInput, kSame, 1, 1); });
}

TEST(InferOutputs, TransposeConvOutputMustMapBackOntoTheInput) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {1, 4, 4, 3});
  const int w = Filter(b, {2, 3, 3, 3});
  EXPECT_EQ(b.shape(b.TransposeConv(x, w, builder::kNoInput, {1, 8, 8, 2}, kSame, 2, 2)), (Shape{1, 8, 8, 2}));
  EXPECT_EQ(b.shape(b.TransposeConv(x, w, builder::kNoInput, {1, 7, 7, 2}, kSame, 2, 2)), (Shape{1, 7, 7, 2}));
  EXPECT_EQ(b.shape(b.TransposeConv(x, w, builder::kNoInput, {1, 9, 9, 2}, kValid, 2, 2)), (Shape{1, 9, 9, 2}));
  ErrorOfInferOutputs([&] { b.TransposeConv(x, w, builder::kNoInput, {1, 12, 12, 2}, kSame, 2, 2); });
  ErrorOfInferOutputs([&] { b.TransposeConv(x, w, builder::kNoInput, {1, 8, 8, 3}, kSame, 2, 2); });  // channels
}

TEST(InferOutputs, MediaPipeTransposeConvImpliesItsOutputSize) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {1, 5, 5, 3});
  const int bias = b.ConstF32("bias", {2}, {0, 0});
  EXPECT_EQ(b.shape(b.Convolution2DTransposeBias(x, Filter(b, {2, 4, 4, 3}), bias, kSame, 2, 2)),
            (Shape{1, 9, 9, 2}));  // 2*4 + 4 less SAME padding 4 - 0 - 1 = 3
  EXPECT_EQ(b.shape(b.Convolution2DTransposeBias(x, Filter(b, {2, 3, 3, 3}), bias, kValid, 2, 2)),
            (Shape{1, 11, 11, 2}));
}

TEST(InferOutputs, MediaPipePoolingOps) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {1, 7, 8, 3});
  auto [values, indices] = b.MaxPoolingWithArgmax2D(x, kSame, 2, 2, 2, 2);
  EXPECT_EQ(b.shape(values), (Shape{1, 4, 4, 3}));
  EXPECT_EQ(b.tensor(indices).dtype, kF32);
  EXPECT_EQ(b.shape(b.MaxUnpooling2D(values, indices, kSame, 2, 2, 2, 2)), (Shape{1, 8, 8, 3}));
  ErrorOfInferOutputs([&] { b.MaxUnpooling2D(values, x, kSame, 2, 2, 2, 2); });  // indices shape
}

TEST(MediaPipeOptions, DecodeTheFixtureTransposeConvOptions) {
  const ir::Model model = format::ReadModel(testing::FixtureModel("selfie_segmentation.tflite"));
  int found = 0;
  for (const ir::Op& op : model.main().ops) {
    if (op.custom_code != "Convolution2DTransposeBias") continue;
    ++found;
    const ir::MediaPipeTransposeConvOptions o = ir::DecodeMediaPipeTransposeConvOptions(op.custom_options);
    EXPECT_EQ(o.padding, kSame);
    EXPECT_EQ(o.stride_w, 2);
    EXPECT_EQ(o.stride_h, 2);
    // Our encoding writes the same bytes.
    EXPECT_EQ(ir::EncodeMediaPipeOptions(o), op.custom_options);
  }
  EXPECT_EQ(found, 1);
  ErrorOfInferOutputs([] { ir::DecodeMediaPipePoolOptions(std::vector<uint8_t>(12, 0)); });           // too short
  ErrorOfInferOutputs([] { ir::DecodeMediaPipeTransposeConvOptions(std::vector<uint8_t>(12, 0)); });  // padding 0
}

// ---------------------------------------------------------------- elementwise

TEST(InferOutputs, BinaryOpsBroadcastNumpyStyle) {
  GraphBuilder b;
  const int a = b.Input("a", kF32, {2, 1, 3});
  const int c = b.Input("c", kF32, {4, 1});
  EXPECT_EQ(b.shape(b.Add(a, c)), (Shape{2, 4, 3}));
  const int scalar = b.ConstF32("s", {}, {2.0f});
  EXPECT_EQ(b.shape(b.Mul(a, scalar)), (Shape{2, 1, 3}));
  const int bad = b.Input("bad", kF32, {2});
  const std::string message = ErrorOfInferOutputs([&] { b.Sub(a, bad); });
  EXPECT_NE(message.find("do not broadcast"), std::string::npos) << message;
  ErrorOfInferOutputs([&] { b.Add(a, b.Input("i", tfl::TensorType_INT32, {3})); });  // mixed dtypes
}

TEST(InferOutputs, ComparisonsGiveBoolAndSelectsBroadcast) {
  GraphBuilder b;
  const int a = b.Input("a", kF32, {2, 3});
  const int c = b.Input("c", kF32, {3});
  const int less = b.Less(a, c);
  EXPECT_EQ(b.tensor(less).dtype, tfl::TensorType_BOOL);
  EXPECT_EQ(b.shape(less), (Shape{2, 3}));
  EXPECT_EQ(b.shape(b.SelectV2(b.ConstBool("cond", {2, 1}, {true, false}), c, a)), (Shape{2, 3}));
  // SELECT v1 takes a condition along the first dimension, but no broadcast.
  EXPECT_EQ(b.shape(b.Select(b.ConstBool("rows", {2}, {true, false}), a, a)), (Shape{2, 3}));
  ErrorOfInferOutputs([&] { b.Select(b.ConstBool("cols", {3}, {true, false, true}), a, a); });
  ErrorOfInferOutputs([&] { b.LogicalAnd(a, a); });  // needs bools
  EXPECT_EQ(b.tensor(b.Cast(less, tfl::TensorType_INT32)).dtype, tfl::TensorType_INT32);
}

TEST(InferOutputs, CastWithoutOptionsTakesTheDeclaredType) {
  ir::Op op;
  op.code = tfl::BuiltinOperator_CAST;
  std::vector<ir::InputInfo> inputs(1);
  inputs[0].present = true;
  inputs[0].spec = {kF32, {2, 2}};
  const std::vector<ir::DType> declared = {tfl::TensorType_INT32};
  EXPECT_EQ(ir::InferOutputs(op, inputs, declared), (std::vector<ir::TensorSpec>{{tfl::TensorType_INT32, {2, 2}}}));
  ErrorOfInferOutputs([&] { ir::InferOutputs(op, inputs); });
}

TEST(InferOutputs, DequantizeGivesFloat32) {
  GraphBuilder b;
  const int half = b.ConstF16FromF32("h", {2, 2}, {1, 2, 3, 4});
  const int q = b.ConstInt8("q", {3}, {1, 2, 3}, 0.5f, 0);
  EXPECT_EQ(b.tensor(b.Dequantize(half)).dtype, kF32);
  EXPECT_EQ(b.shape(b.Dequantize(q)), (Shape{3}));
  ErrorOfInferOutputs([&] { b.Dequantize(b.Input("f", kF32, {2})); });
}

// ---------------------------------------------------------------- reductions

TEST(InferOutputs, ReductionsHandleKeepDimsNegativeAndRepeatedAxes) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {2, 3, 4, 5});
  EXPECT_EQ(b.shape(b.Mean(x, {1, 2}, true)), (Shape{2, 1, 1, 5}));
  EXPECT_EQ(b.shape(b.Mean(x, {1, 2}, false)), (Shape{2, 5}));
  EXPECT_EQ(b.shape(b.Sum(x, {-1}, false)), (Shape{2, 3, 4}));
  EXPECT_EQ(b.shape(b.ReduceMax(x, {0, -4, 3}, false)), (Shape{3, 4}));
  EXPECT_EQ(b.shape(b.ReduceProd(x, {0, 1, 2, 3}, false)), (Shape{}));
  const std::string message = ErrorOfInferOutputs([&] { b.ReduceMin(x, {4}, true); });
  EXPECT_NE(message.find("axis 4 is out of range"), std::string::npos) << message;
}

TEST(InferOutputs, ArgMaxTopKAndCumsum) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {3, 5, 7});
  EXPECT_EQ(b.shape(b.ArgMax(x, -2)), (Shape{3, 7}));
  EXPECT_EQ(b.tensor(b.ArgMin(x, 0, tfl::TensorType_INT64)).dtype, tfl::TensorType_INT64);
  auto [values, indices] = b.TopKV2(x, 4);
  EXPECT_EQ(b.shape(values), (Shape{3, 5, 4}));
  EXPECT_EQ(b.tensor(indices).dtype, tfl::TensorType_INT32);
  ErrorOfInferOutputs([&] { b.TopKV2(x, 8); });
  EXPECT_EQ(b.shape(b.Cumsum(x, -1)), (Shape{3, 5, 7}));
  ErrorOfInferOutputs([&] { b.Cumsum(x, 3); });
  ErrorOfInferOutputs([&] { b.ArgMax(x, 0, kF32); });  // output type must be an integer
}

// ---------------------------------------------------------------- layout

TEST(InferOutputs, ReshapeInfersMinusOneAndChecksTheCount) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {2, 3, 4});
  EXPECT_EQ(b.shape(b.Reshape(x, {-1, 4})), (Shape{6, 4}));
  EXPECT_EQ(b.shape(b.Reshape(x, {24})), (Shape{24}));
  const int one = b.Input("one", kF32, {1, 1});
  EXPECT_EQ(b.shape(b.Reshape(one, {})), (Shape{}));
  ErrorOfInferOutputs([&] { b.Reshape(x, {5, -1}); });
  ErrorOfInferOutputs([&] { b.Reshape(x, {-1, -1}); });
  const std::string message = ErrorOfInferOutputs([&] { b.Reshape(x, {2, 3}); });
  EXPECT_NE(message.find("holds 6 elements"), std::string::npos) << message;
}

TEST(InferOutputs, ShapeTensorsMustBeKnown) {
  // A reshape whose shape arrives at run time cannot be sized statically.
  GraphBuilder b;
  const int x = b.Input("x", kF32, {2, 3});
  const int shape = b.Input("shape", tfl::TensorType_INT32, {2});
  ErrorOfInferOutputs([&] { b.Op(tfl::BuiltinOperator_RESHAPE, {x, shape}); }, ErrorKind::kUnsupported);
  // ... unless the options carry it too, as converters write them.
  tfl::ReshapeOptionsT o;
  o.new_shape = {3, 2};
  EXPECT_EQ(b.shape(b.Op(tfl::BuiltinOperator_RESHAPE, {x, shape}, builder::Options(o))[0]), (Shape{3, 2}));
}

TEST(InferOutputs, SqueezeAndExpandDimsTakeNegativeAxes) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {1, 3, 1, 4});
  EXPECT_EQ(b.shape(b.Squeeze(x)), (Shape{3, 4}));
  EXPECT_EQ(b.shape(b.Squeeze(x, {-2})), (Shape{1, 3, 4}));
  ErrorOfInferOutputs([&] { b.Squeeze(x, {1}); });  // not a 1
  EXPECT_EQ(b.shape(b.ExpandDims(x, -1)), (Shape{1, 3, 1, 4, 1}));
  EXPECT_EQ(b.shape(b.ExpandDims(x, 0)), (Shape{1, 1, 3, 1, 4}));
  EXPECT_EQ(b.shape(b.ExpandDims(x, 4)), (Shape{1, 3, 1, 4, 1}));
  ErrorOfInferOutputs([&] { b.ExpandDims(x, 6); });
}

TEST(InferOutputs, TransposeNeedsAPermutation) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {2, 3, 4});
  EXPECT_EQ(b.shape(b.Transpose(x, {2, 0, 1})), (Shape{4, 2, 3}));
  ErrorOfInferOutputs([&] { b.Transpose(x, {0, 0, 1}); });
  ErrorOfInferOutputs([&] { b.Transpose(x, {0, 1}); });
}

TEST(InferOutputs, ConcatenationJoinsOneAxis) {
  GraphBuilder b;
  const int a = b.Input("a", kF32, {2, 3, 1});
  const int c = b.Input("c", kF32, {2, 3, 5});
  EXPECT_EQ(b.shape(b.Concatenation({a, c, a}, -1)), (Shape{2, 3, 7}));
  const std::string message = ErrorOfInferOutputs([&] { b.Concatenation({a, c}, 1); });
  EXPECT_NE(message.find("does not join"), std::string::npos) << message;
}

TEST(InferOutputs, SplitsPacksAndUnpacks) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {2, 6, 3});
  const std::vector<int> thirds = b.Split(x, -2, 3);
  ASSERT_EQ(thirds.size(), 3u);
  EXPECT_EQ(b.shape(thirds[2]), (Shape{2, 2, 3}));
  ErrorOfInferOutputs([&] { b.Split(x, 1, 4); });
  const std::vector<int> parts = b.SplitV(x, {1, -1, 2}, 1);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(b.shape(parts[1]), (Shape{2, 3, 3}));
  ErrorOfInferOutputs([&] { b.SplitV(x, {1, 2}, 1); });  // sizes do not add up
  EXPECT_EQ(b.shape(b.Pack({x, x}, -1)), (Shape{2, 6, 3, 2}));
  EXPECT_EQ(b.shape(b.Pack({x, x}, 0)), (Shape{2, 2, 6, 3}));
  const std::vector<int> rows = b.Unpack(x, -1);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(b.shape(rows[0]), (Shape{2, 6}));
}

TEST(InferOutputs, SliceAndPads) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {3, 4, 5});
  EXPECT_EQ(b.shape(b.Slice(x, {1, 0, 2}, {2, -1, 3})), (Shape{2, 4, 3}));
  ErrorOfInferOutputs([&] { b.Slice(x, {2, 0, 0}, {2, 1, 1}); });
  EXPECT_EQ(b.shape(b.Pad(x, {{1, 0}, {0, 0}, {2, 3}})), (Shape{4, 4, 10}));
  ErrorOfInferOutputs([&] { b.Pad(x, {{1, 0}, {0, 0}}); });           // one row per dimension
  ErrorOfInferOutputs([&] { b.Pad(x, {{-1, 0}, {0, 0}, {0, 0}}); });  // negative
  EXPECT_EQ(b.shape(b.MirrorPad(x, {{2, 2}, {3, 0}, {0, 4}}, tfl::MirrorPadMode_REFLECT)), (Shape{7, 7, 9}));
  ErrorOfInferOutputs([&] { b.MirrorPad(x, {{3, 0}, {0, 0}, {0, 0}}, tfl::MirrorPadMode_REFLECT); });
  EXPECT_EQ(b.shape(b.MirrorPad(x, {{3, 0}, {0, 0}, {0, 0}}, tfl::MirrorPadMode_SYMMETRIC)), (Shape{6, 4, 5}));
}

TEST(InferOutputs, TileBroadcastAndGathers) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {2, 5, 3});
  EXPECT_EQ(b.shape(b.Tile(x, {2, 1, 3})), (Shape{4, 5, 9}));
  EXPECT_EQ(b.shape(b.BroadcastTo(b.Input("col", kF32, {5, 1}), {2, 5, 4})), (Shape{2, 5, 4}));
  ErrorOfInferOutputs([&] { b.BroadcastTo(x, {5, 3}); });
  const int indices = b.ConstI32("indices", {2, 4}, {0, 1, 2, 3, 4, 0, 1, 2});
  EXPECT_EQ(b.shape(b.Gather(x, indices, 1)), (Shape{2, 2, 4, 3}));
  EXPECT_EQ(b.shape(b.Gather(x, indices, -2, 1)), (Shape{2, 4, 3}));
  ErrorOfInferOutputs([&] { b.Gather(x, indices, 0, 1); });  // batch_dims > axis
  EXPECT_EQ(b.shape(b.GatherNd(x, b.ConstI32("nd", {4, 2}, {0, 1, 1, 2, 0, 0, 1, 4}))), (Shape{4, 3}));
  ErrorOfInferOutputs([&] { b.GatherNd(x, b.ConstI32("deep", {1, 4}, {0, 0, 0, 0})); });
}

TEST(InferOutputs, MatMulsAndFullyConnected) {
  GraphBuilder b;
  const int lhs = b.Input("lhs", kF32, {2, 1, 3, 4});
  const int rhs = b.Input("rhs", kF32, {5, 4, 6});
  EXPECT_EQ(b.shape(b.BatchMatMul(lhs, rhs)), (Shape{2, 5, 3, 6}));
  EXPECT_EQ(b.shape(b.BatchMatMul(lhs, b.Input("t", kF32, {6, 4}), false, true)), (Shape{2, 1, 3, 6}));
  EXPECT_EQ(b.shape(b.BatchMatMul(lhs, b.Input("u", kF32, {3, 2}), true, false)), (Shape{2, 1, 4, 2}));
  ErrorOfInferOutputs([&] { b.BatchMatMul(lhs, lhs); });  // 4 vs 3
  const int x = b.Input("x", kF32, {2, 3, 8});
  const int w = b.ConstF32("w", {5, 8}, std::vector<float>(40));
  EXPECT_EQ(b.shape(b.FullyConnected(x, w, builder::kNoInput)), (Shape{6, 5}));
  EXPECT_EQ(b.shape(b.FullyConnected(x, w, builder::kNoInput, builder::kNoActivation, true)), (Shape{2, 3, 5}));
  const int w6 = b.ConstF32("w6", {5, 6}, std::vector<float>(30));
  EXPECT_EQ(b.shape(b.FullyConnected(x, w6, builder::kNoInput)), (Shape{8, 5}));
  ErrorOfInferOutputs([&] { b.FullyConnected(x, w6, builder::kNoInput, builder::kNoActivation, true); });
}

TEST(InferOutputs, ResizeAndDepthSpace) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {1, 4, 6, 8});
  EXPECT_EQ(b.shape(b.ResizeBilinear(x, 9, 3)), (Shape{1, 9, 3, 8}));
  // Both align flags: a model the CPU runs (corners aligned) and lint reports.
  EXPECT_EQ(b.shape(b.ResizeBilinear(x, 8, 8, true, true)), (Shape{1, 8, 8, 8}));
  EXPECT_EQ(b.shape(b.DepthToSpace(x, 2)), (Shape{1, 8, 12, 2}));
  EXPECT_EQ(b.shape(b.SpaceToDepth(x, 2)), (Shape{1, 2, 3, 32}));
  ErrorOfInferOutputs([&] { b.DepthToSpace(x, 3); });
  ErrorOfInferOutputs([&] { b.SpaceToDepth(x, 4); });
}

// ---------------------------------------------------------------- strided slice

struct SliceSpec {
  std::vector<int64_t> begin, end, strides;
  builder::StridedSliceMasks masks;
};

Shape SliceShape(const Shape& input, const SliceSpec& s) {
  tfl::StridedSliceOptionsT o;
  o.begin_mask = s.masks.begin;
  o.end_mask = s.masks.end;
  o.ellipsis_mask = s.masks.ellipsis;
  o.new_axis_mask = s.masks.new_axis;
  o.shrink_axis_mask = s.masks.shrink_axis;
  o.offset = s.masks.offset;
  return ir::PlanStridedSlice(input, s.begin, s.end, s.strides, o).output_shape;
}

TEST(PlanStridedSlice, MasksAndStrides) {
  const Shape in = {4, 5, 6};
  EXPECT_EQ(SliceShape(in, {{1, 0, 0}, {3, 5, 6}, {1, 1, 1}, {}}), (Shape{2, 5, 6}));
  // begin/end masks ignore the given values.
  EXPECT_EQ(SliceShape(in, {{3, 9, 0}, {0, 0, 6}, {1, 1, 2}, {.begin = 3, .end = 3}}), (Shape{4, 5, 3}));
  // Out-of-range ends clamp; negative indices count from the end.
  EXPECT_EQ(SliceShape(in, {{-3, 0, 0}, {100, -1, 6}, {1, 1, 4}, {}}), (Shape{3, 4, 2}));
  // Reversal: x[::-1] and a stride of -2 from the last element.
  EXPECT_EQ(SliceShape(in, {{0, 0, 0}, {0, 0, 0}, {-1, 1, 1}, {.begin = 7, .end = 7}}), (Shape{4, 5, 6}));
  EXPECT_EQ(SliceShape(in, {{-1, 4, 0}, {0, -6, 6}, {-1, -2, 1}, {}}), (Shape{3, 3, 6}));
  // Fewer entries than dimensions: the rest are taken whole.
  EXPECT_EQ(SliceShape(in, {{1}, {2}, {1}, {}}), (Shape{1, 5, 6}));
  // Empty ranges give zero, never negative, sizes.
  EXPECT_EQ(SliceShape(in, {{3, 0, 0}, {1, 5, 6}, {1, 1, 1}, {}}), (Shape{0, 5, 6}));
}

TEST(PlanStridedSlice, ShrinkNewAxisEllipsisAndOffset) {
  const Shape in = {4, 5, 6};
  // x[1, 2:4]: shrink drops the first dimension.
  EXPECT_EQ(SliceShape(in, {{1, 2}, {2, 4}, {1, 1}, {.shrink_axis = 1}}), (Shape{2, 6}));
  // x[-1]: shrink with a negative index.
  EXPECT_EQ(SliceShape(in, {{-1}, {0}, {1}, {.shrink_axis = 1}}), (Shape{5, 6}));
  // x[..., 1]
  EXPECT_EQ(SliceShape(in, {{0, 1}, {0, 2}, {1, 1}, {.ellipsis = 1, .shrink_axis = 2}}), (Shape{4, 5}));
  // x[1:3, ..., ::2]
  EXPECT_EQ(SliceShape(in, {{1, 0, 0}, {3, 0, 0}, {1, 1, 2}, {.begin = 4, .end = 4, .ellipsis = 2}}), (Shape{2, 5, 3}));
  // x[:, newaxis, 1:3]
  EXPECT_EQ(SliceShape(in, {{0, 0, 1}, {0, 0, 3}, {1, 1, 1}, {.begin = 1, .end = 1, .new_axis = 2}}),
            (Shape{4, 1, 2, 6}));
  // x[1, ..., newaxis, 2:4]
  EXPECT_EQ(
      SliceShape(in, {{1, 0, 0, 2}, {2, 0, 0, 4}, {1, 1, 1, 1}, {.ellipsis = 2, .new_axis = 4, .shrink_axis = 1}}),
      (Shape{5, 1, 2}));
  // A new axis on the ellipsis' own bit is ignored.
  EXPECT_EQ(SliceShape(in, {{0}, {0}, {1}, {.ellipsis = 1, .new_axis = 1}}), (Shape{4, 5, 6}));
  // offset: end holds lengths.
  EXPECT_EQ(SliceShape(in, {{1, 2, 0}, {2, 3, 6}, {1, 1, 3}, {.offset = true}}), (Shape{2, 3, 2}));
}

TEST(PlanStridedSlice, InconsistentSpecsThrow) {
  const Shape in = {4, 5, 6};
  ErrorOfInferOutputs([&] { SliceShape(in, {{0, 0}, {1, 1}, {1, 0}, {}}); });                    // zero stride
  ErrorOfInferOutputs([&] { SliceShape(in, {{4}, {5}, {1}, {.shrink_axis = 1}}); });             // shrink past the end
  ErrorOfInferOutputs([&] { SliceShape(in, {{0, 0}, {1}, {1, 1}, {}}); });                       // lengths differ
  ErrorOfInferOutputs([&] { SliceShape(in, {{0, 0, 0, 0}, {1, 1, 1, 1}, {1, 1, 1, 1}, {}}); });  // too many entries
  ErrorOfInferOutputs([&] { SliceShape(in, {{0, 0}, {0, 0}, {1, 1}, {.ellipsis = 3}}); });       // two ellipses
  ErrorOfInferOutputs([&] {
    SliceShape(in, {{3, 0, 0}, {2, 5, 6}, {1, 1, 1}, {.offset = true}});
  });  // runs past the end
  GraphBuilder b;
  const int x = b.Input("x", kF32, in);
  const std::string message = ErrorOfInferOutputs([&] { b.StridedSlice(x, {9}, {10}, {1}, {.shrink_axis = 1}); });
  EXPECT_NE(message.find("STRIDED_SLICE"), std::string::npos) << message;
}

// ---------------------------------------------------------------- coverage and fixtures

TEST(InferOutputs, UnknownOpsAreUnsupported) {
  ir::Op op;
  op.code = tfl::BuiltinOperator_CUSTOM;
  op.custom_code = "NoSuchOp";
  EXPECT_FALSE(ir::HasShapeRule(op));
  ErrorOfInferOutputs([&] { ir::InferOutputs(op, std::vector<ir::InputInfo>{}); }, ErrorKind::kUnsupported);
  op.code = tfl::BuiltinOperator_LSTM;
  EXPECT_FALSE(ir::HasShapeRule(op));
  op.code = tfl::BuiltinOperator_CONV_2D;
  EXPECT_TRUE(ir::HasShapeRule(op));
}

TEST(InferOutputs, ErrorsNameTheGraphOp) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {2, 3});
  b.Output(b.Relu(x));
  ir::Model model = b.Finish();
  ir::Subgraph& g = model.main();
  g.ops[0].inputs.push_back(x);  // RELU with two inputs
  const std::string message = ErrorOfInferOutputs([&] { ir::InferOutputs(g, g.ops[0]); });
  EXPECT_EQ(message, "subgraph 'main' op 0: RELU: expects 1 inputs, got 2");
}

// Every op of every fixture model: inference reproduces the model's own
// output shapes and types.
TEST(InferOutputs, AgreesWithEveryFixtureModel) {
  for (const std::string& path : testing::FixtureModels()) {
    SCOPED_TRACE(path);
    const ir::Model model = format::ReadModel(path);
    for (const ir::Subgraph& g : model.subgraphs) {
      for (size_t i = 0; i < g.ops.size(); ++i) {
        const ir::Op& op = g.ops[i];
        SCOPED_TRACE("op " + std::to_string(i) + " " + op.name());
        std::vector<ir::TensorSpec> specs;
        ASSERT_NO_THROW(specs = ir::InferOutputs(g, op));
        ASSERT_EQ(specs.size(), op.outputs.size());
        for (size_t k = 0; k < specs.size(); ++k) {
          EXPECT_EQ(specs[k].shape, g.tensors[op.outputs[k]].shape);
          EXPECT_EQ(specs[k].dtype, g.tensors[op.outputs[k]].dtype);
        }
      }
    }
  }
}

}  // namespace
}  // namespace gpuclean
