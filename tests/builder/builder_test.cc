// GraphBuilder itself: constants (fp16 rounding, int8 quantisation, sparse
// storage), naming, operator versions, validation, and a lossless trip
// through the format layer.
#include <gtest/gtest.h>

#include "gpuclean/builder.h"
#include "gpuclean/error.h"
#include "gpuclean/format.h"
#include "support/tflite_names.h"

namespace gpuclean {
namespace {

using builder::GraphBuilder;
using builder::Shape;
using ::gpuclean::testing::tflite_names::kF32;

std::vector<uint16_t> HalfBitsOf(const std::vector<float>& values) {
  GraphBuilder b;
  const int t = b.ConstF16FromF32("h", {static_cast<int32_t>(values.size())}, values);
  auto bits = b.tensor(t).data->as<uint16_t>();
  return {bits.begin(), bits.end()};
}

TEST(GraphBuilder, Fp16ConstantsRoundToNearestEven) {
  EXPECT_EQ(HalfBitsOf({1.0f, -2.0f, 0.0f, -0.0f, 0.1f, 65504.0f}),
            (std::vector<uint16_t>{0x3c00, 0xc000, 0x0000, 0x8000, 0x2e66, 0x7bff}));
  // 65519 still rounds down to the largest half; 65520 overflows to inf.
  EXPECT_EQ(HalfBitsOf({65519.0f, 65520.0f, 1e9f, -1e9f}), (std::vector<uint16_t>{0x7bff, 0x7c00, 0x7c00, 0xfc00}));
  // Subnormals: 2^-24 is the smallest; half of it ties to even (zero).
  EXPECT_EQ(HalfBitsOf({5.9604645e-8f, 2.9802322e-8f, 8.940697e-8f, 6.097555e-5f}),
            (std::vector<uint16_t>{0x0001, 0x0000, 0x0002, 0x03ff}));
  // Ties between normals go to the even mantissa: 1 + 2^-11 -> 1, 1 + 3*2^-11 -> 1 + 2^-9.
  EXPECT_EQ(HalfBitsOf({1.00048828125f, 1.00146484375f}), (std::vector<uint16_t>{0x3c00, 0x3c02}));
  const std::vector<uint16_t> nan = HalfBitsOf({std::numeric_limits<float>::quiet_NaN()});
  EXPECT_EQ(nan[0] & 0x7c00, 0x7c00);
  EXPECT_NE(nan[0] & 0x03ff, 0);
}

TEST(GraphBuilder, QuantizedAndSparseConstants) {
  GraphBuilder b;
  const int q = b.ConstInt8("q", {2, 2}, {-1, 0, 1, 2}, 0.25f, -3);
  EXPECT_EQ(b.tensor(q).dtype, tfl::TensorType_INT8);
  EXPECT_EQ(b.tensor(q).quant.scale, (std::vector<float>{0.25f}));
  EXPECT_EQ(b.tensor(q).quant.zero_point, (std::vector<int64_t>{-3}));
  const int pc = b.ConstInt8PerChannel("pc", {3, 2}, {1, 2, 3, 4, 5, 6}, {0.1f, 0.2f, 0.3f}, 0);
  EXPECT_EQ(b.tensor(pc).quant.zero_point, (std::vector<int64_t>{0, 0, 0}));
  EXPECT_THROW(b.ConstInt8PerChannel("bad", {3, 2}, {1, 2, 3, 4, 5, 6}, {0.1f}, 0), Error);

  const int sparse = b.ConstSparseF32("s", {2, 3}, {0, 5, 0, 7, 0, 8});
  const ir::Tensor& t = b.tensor(sparse);
  ASSERT_TRUE(t.sparsity.has_value());
  EXPECT_EQ(t.shape, (Shape{2, 3}));
  auto stored = t.data->as<float>();
  EXPECT_EQ(std::vector<float>(stored.begin(), stored.end()), (std::vector<float>{5, 7, 8}));
  const auto& columns = *t.sparsity->dim_metadata[1];
  EXPECT_EQ(columns.array_segments.AsInt32Vector()->values, (std::vector<int32_t>{0, 1, 3}));
  EXPECT_EQ(columns.array_indices.AsInt32Vector()->values, (std::vector<int32_t>{1, 0, 2}));
  EXPECT_EQ(b.shape(b.Densify(sparse)), (Shape{2, 3}));
  EXPECT_THROW(b.Densify(q), Error);  // not sparse
}

TEST(GraphBuilder, ConstantsMustMatchTheirShapes) {
  GraphBuilder b;
  EXPECT_THROW(b.ConstF32("short", {2, 2}, {1, 2, 3}), Error);
  EXPECT_THROW(b.Const("bytes", kF32, {2}, Bytes::Own({1, 2, 3})), Error);
  EXPECT_THROW(b.ConstI32("empty", {0}, {}), Error);  // the format cannot store it
  EXPECT_THROW(b.Input("negative", kF32, {-1, 2}), Error);
}

TEST(GraphBuilder, NamesOutputsAfterTheirOps) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {2, 6});
  const int y = b.Relu(x);
  const std::vector<int> parts = b.Split(y, 1, 3);
  EXPECT_EQ(b.tensor(y).name, "relu_0");
  EXPECT_EQ(b.tensor(parts[0]).name, "split_1");
  EXPECT_EQ(b.tensor(parts[2]).name, "split_1:2");
  // Attribute constants are named after the op they feed.
  const ir::Op& split = b.graph().ops[1];
  EXPECT_EQ(b.tensor(split.inputs[0]).name, "split_1/axis");
  const int mean = b.Mean(y, {1}, true);
  EXPECT_EQ(b.tensor(b.graph().ops.back().inputs[1]).name, "mean_2/axis");
  EXPECT_EQ(b.tensor(mean).name, "mean_2");
}

TEST(GraphBuilder, PicksOperatorVersionsLiteRtRegisters) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {1, 4, 4, 4});
  auto version_of = [&](int tensor) { return b.graph().ops[b.graph().Producer(tensor)].version; };
  EXPECT_EQ(version_of(b.Relu(x)), 1);
  EXPECT_EQ(version_of(b.BroadcastTo(x, {2, 4, 4, 4})), 2);  // v1 was withdrawn
  EXPECT_EQ(version_of(b.Dequantize(b.ConstF16FromF32("h", {2}, {1, 2}))), 3);
  EXPECT_EQ(version_of(b.Dequantize(b.ConstInt8("q", {2}, {1, 2}, 1.0f, 0))), 2);
  EXPECT_EQ(version_of(b.Dequantize(b.ConstInt8PerChannel("pc", {2}, {1, 2}, {1.0f, 2.0f}, 0))), 5);
  EXPECT_EQ(version_of(b.StridedSlice(x, {0}, {1}, {1})), 1);
  EXPECT_EQ(version_of(b.StridedSlice(x, {0, 0}, {1, 1}, {1, 1}, {.ellipsis = 1})), 6);
  EXPECT_EQ(version_of(b.StridedSlice(x, {0}, {1}, {1}, {.offset = true})), 8);
  const int w = b.ConstF32("w", {3, 4}, std::vector<float>(12));
  EXPECT_EQ(version_of(b.FullyConnected(x, w, builder::kNoInput)), 1);
  EXPECT_EQ(version_of(b.FullyConnected(x, w, builder::kNoInput, builder::kNoActivation, true)), 5);
  EXPECT_EQ(version_of(b.Conv2D(x, b.ConstF32("g", {4, 1, 1, 2}, std::vector<float>(8)), builder::kNoInput,
                                tfl::Padding_SAME, 1, 1)),
            6);  // grouped
  EXPECT_EQ(version_of(b.DepthwiseConv2D(x, b.ConstF32("d", {1, 3, 3, 4}, std::vector<float>(36)), builder::kNoInput,
                                         tfl::Padding_SAME, 1, 1, builder::kNoActivation, 2, 2)),
            2);  // dilated
  EXPECT_EQ(version_of(b.ResizeBilinear(x, 8, 8, false, true)), 3);
  EXPECT_EQ(version_of(b.FloorDiv(x, x)), 2);                                    // float
  EXPECT_EQ(version_of(b.Gather(x, b.ConstI32("i", {1, 2}, {0, 1}), 1, 1)), 5);  // batch_dims
  // An explicit version wins.
  EXPECT_EQ(b.graph().ops[b.graph().Producer(b.Op(tfl::BuiltinOperator_RELU, {x}, {}, 3)[0])].version, 3);
}

TEST(GraphBuilder, ConvolutionsWithoutBiasGetZeros) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {1, 4, 4, 2});
  const int y = b.Conv2D(x, b.ConstF32("w", {3, 1, 1, 2}, std::vector<float>(6, 1.0f)), builder::kNoInput,
                         tfl::Padding_SAME, 1, 1);
  const ir::Op& conv = b.graph().ops[b.graph().Producer(y)];
  ASSERT_EQ(conv.inputs.size(), 3u);
  const ir::Tensor& bias = b.tensor(conv.inputs[2]);
  EXPECT_EQ(bias.shape, (Shape{3}));
  for (float v : bias.data->as<float>()) EXPECT_EQ(v, 0.0f);
}

TEST(GraphBuilder, RejectsBadGraphs) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {2, 3});
  EXPECT_THROW(b.Finish(), Error);  // no outputs
  EXPECT_THROW(b.Relu(17), Error);  // no such tensor
  EXPECT_THROW(b.Op(tfl::BuiltinOperator_CUSTOM, {x}), Error);
  EXPECT_THROW(b.Custom("NoShapeRule", {x}, {}), Error);
  const int y = b.Relu(x);
  b.Output(y);
  EXPECT_THROW(b.Output(y), Error);  // twice
  // A custom op with explicit outputs needs no shape rule.
  const std::vector<int> custom = b.Custom("MyOp", {x}, {1, 2, 3}, {{tfl::TensorType_INT32, {6}}});
  EXPECT_EQ(b.shape(custom[0]), (Shape{6}));
  ir::Model model = b.Finish();
  EXPECT_EQ(model.main().ops.size(), 2u);
  // The builder starts over after Finish().
  EXPECT_TRUE(b.graph().tensors.empty());
}

TEST(GraphBuilder, SurvivesTheFormatRoundTrip) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {1, 8, 8, 3});
  const int w = b.Dequantize(b.ConstF16FromF32("w", {4, 3, 3, 3}, std::vector<float>(108, 0.5f)));
  int y = b.Conv2D(x, w, b.ConstF32("b", {4}, {1, 2, 3, 4}), tfl::Padding_SAME, 2, 2, tfl::ActivationFunctionType_RELU6,
                   1, 1);
  y = b.Convolution2DTransposeBias(y, b.ConstF32("tw", {2, 2, 2, 4}, std::vector<float>(32, 0.1f)),
                                   b.ConstF32("tb", {2}, {0, 0}), tfl::Padding_SAME, 2, 2);
  y = b.Add(y, b.Densify(b.ConstSparseF32("s", {8, 2}, {0, 1, 0, 0, 2, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0})));
  y = b.StridedSlice(y, {0, 1}, {0, 7}, {1, 2}, {.begin = 1, .end = 1, .ellipsis = 0, .shrink_axis = 0});
  b.Output(y);
  const ir::Model built = b.Finish();

  const std::vector<uint8_t> bytes = format::Serialize(built);
  const ir::Model read = format::ReadModelBytes(Bytes::Own(bytes), "built");
  ASSERT_TRUE(read.unpreservable.empty());
  const ir::Subgraph& g = read.main();
  ASSERT_EQ(g.ops.size(), built.main().ops.size());
  for (size_t i = 0; i < g.ops.size(); ++i) {
    EXPECT_EQ(g.ops[i].name(), built.main().ops[i].name());
    EXPECT_EQ(g.ops[i].version, built.main().ops[i].version);
    EXPECT_EQ(ir::InferOutputs(g, g.ops[i])[0].shape, g.tensors[g.ops[i].outputs[0]].shape);
  }
  const auto* conv = g.ops[1].options.AsConv2DOptions();
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->stride_w, 2);
  EXPECT_EQ(conv->fused_activation_function, tfl::ActivationFunctionType_RELU6);
  EXPECT_EQ(g.ops[2].custom_code, "Convolution2DTransposeBias");
  EXPECT_EQ(g.ops[2].custom_options, built.main().ops[2].custom_options);
  const ir::Tensor& sparse = g.tensors[g.ops[3].inputs[0]];
  ASSERT_TRUE(sparse.sparsity.has_value());
  EXPECT_EQ(sparse.data->size(), 3 * sizeof(float));
  EXPECT_EQ(g.tensors[g.outputs[0]].shape, (Shape{1, 3, 8, 2}));
}

TEST(SingleOpGraph, BuildsOneOpOverFloatInputs) {
  tfl::ConcatenationOptionsT o;
  o.axis = 1;
  const ir::Model model =
      builder::SingleOpGraph(tfl::BuiltinOperator_CONCATENATION, {{2, 3}, {2, 5}}, builder::Options(o));
  const ir::Subgraph& g = model.main();
  ASSERT_EQ(g.ops.size(), 1u);
  EXPECT_EQ(g.inputs.size(), 2u);
  EXPECT_EQ(g.tensors[g.inputs[1]].name, "input_1");
  EXPECT_EQ(g.tensors[g.outputs[0]].shape, (Shape{2, 8}));

  const ir::Model split = builder::SingleOpGraph(
      {{4, 2}}, [](GraphBuilder& b, const std::vector<int>& in) { return b.Split(in[0], 0, 2); });
  EXPECT_EQ(split.main().outputs.size(), 2u);
}

}  // namespace
}  // namespace gpuclean
