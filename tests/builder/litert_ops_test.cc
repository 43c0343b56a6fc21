// ctest-labels: litert
// Runs every OpCase on LiteRT.js: the builder's graphs must load and run in
// the real runtime, with the output shapes our shape inference predicted.
#include <set>

#include "builder/litert_case.h"
#include "gpuclean/format.h"
#include "support/test_support.h"

namespace gpuclean::testing {
namespace {

class LiteRtOpTest : public ::testing::TestWithParam<OpCase> {};

Arrays GenerateInputs(const OpCase& c, const ir::Model& model) {
  if (c.inputs) return c.inputs(model);
  Arrays inputs;
  uint32_t seed = 1;
  for (int32_t t : model.main().inputs) {
    const ir::Tensor& tensor = model.main().tensors[t];
    if (tensor.dtype == tfl::TensorType_FLOAT32) {
      inputs.push_back(FloatArray(tensor.shape, Ramp(tensor.num_elements(), seed++, c.low, c.high)));
    } else if (tensor.dtype == tfl::TensorType_INT32) {
      std::vector<int32_t> values(tensor.num_elements());
      for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<int32_t>(i % 7) - 3;
      inputs.push_back(IntArray(tensor.shape, values));
    } else {
      ADD_FAILURE() << "no input generator for " << ir::DTypeName(tensor.dtype);
    }
  }
  return inputs;
}

// What a reread model must still say about each tensor and op.
void ExpectSameGraph(const ir::Subgraph& built, const ir::Subgraph& read) {
  ASSERT_EQ(read.tensors.size(), built.tensors.size());
  for (size_t t = 0; t < built.tensors.size(); ++t) {
    SCOPED_TRACE(built.tensors[t].name);
    EXPECT_EQ(read.tensors[t].name, built.tensors[t].name);
    EXPECT_EQ(read.tensors[t].dtype, built.tensors[t].dtype);
    EXPECT_EQ(read.tensors[t].shape, built.tensors[t].shape);
    EXPECT_EQ(read.tensors[t].is_const(), built.tensors[t].is_const());
  }
  ASSERT_EQ(read.ops.size(), built.ops.size());
  for (size_t i = 0; i < built.ops.size(); ++i) {
    EXPECT_EQ(read.ops[i].name(), built.ops[i].name());
    EXPECT_EQ(read.ops[i].version, built.ops[i].version);
    EXPECT_EQ(read.ops[i].inputs, built.ops[i].inputs);
    EXPECT_EQ(read.ops[i].outputs, built.ops[i].outputs);
    EXPECT_EQ(read.ops[i].options.type, built.ops[i].options.type);
    EXPECT_EQ(read.ops[i].custom_options, built.ops[i].custom_options);
    // Shape inference on the reread graph agrees with what was built.
    std::vector<ir::TensorSpec> specs = ir::InferOutputs(read, read.ops[i]);
    ASSERT_EQ(specs.size(), read.ops[i].outputs.size());
    for (size_t k = 0; k < specs.size(); ++k) {
      const ir::Tensor& out = read.tensors[read.ops[i].outputs[k]];
      EXPECT_EQ(specs[k].shape, out.shape);
      EXPECT_EQ(specs[k].dtype, out.dtype);
    }
  }
  EXPECT_EQ(read.inputs, built.inputs);
  EXPECT_EQ(read.outputs, built.outputs);
}

TEST_P(LiteRtOpTest, LoadsAndRunsWithPredictedShapes) {
  const OpCase& c = GetParam();
  ir::Model model = c.build();
  TempDir dir;
  const std::string path = dir.file(c.name + ".tflite");
  format::WriteModel(model, path);

  ir::Model reread = format::ReadModel(path);
  ASSERT_TRUE(reread.unpreservable.empty()) << reread.unpreservable.front();
  ExpectSameGraph(model.main(), reread.main());

  const Arrays inputs = GenerateInputs(c, model);
  Arrays outputs;
  try {
    outputs = RunLiteRt(path, inputs);
  } catch (const std::exception& e) {
    FAIL() << e.what();
  }
  const ir::Subgraph& g = model.main();
  ASSERT_EQ(outputs.size(), g.outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    const ir::Tensor& expected = g.tensors[g.outputs[i]];
    SCOPED_TRACE("output " + std::to_string(i) + " (" + expected.name + ")");
    EXPECT_EQ(outputs[i].dtype, expected.dtype);
    EXPECT_EQ(Shape(outputs[i].shape.begin(), outputs[i].shape.end()), expected.shape);
  }
  if (c.check && !HasFailure()) c.check(inputs, outputs);
}

std::vector<OpCase> AllCases() {
  std::vector<OpCase> all;
  for (auto family : {ElementwiseCases, ConvCases, LayoutCases, ReduceCases, PatternCases})
    for (OpCase& c : family()) all.push_back(std::move(c));
  return all;
}

INSTANTIATE_TEST_SUITE_P(Builder, LiteRtOpTest, ::testing::ValuesIn(AllCases()),
                         [](const ::testing::TestParamInfo<OpCase>& info) { return info.param.name; });

// The op list: every op must appear in at least one case that runs
// on LiteRT.js (the MediaPipe custom ops by their custom code).
TEST(LiteRtOpCoverage, EveryListedOpHasACase) {
  const std::vector<std::string> required = {"ADD",
                                             "SUB",
                                             "MUL",
                                             "DIV",
                                             "SQUARED_DIFFERENCE",
                                             "MAXIMUM",
                                             "MINIMUM",
                                             "POW",
                                             "FLOOR_DIV",
                                             "ABS",
                                             "NEG",
                                             "EXP",
                                             "LOG",
                                             "SQRT",
                                             "RSQRT",
                                             "SQUARE",
                                             "SIN",
                                             "COS",
                                             "FLOOR",
                                             "CEIL",
                                             "TANH",
                                             "LOGISTIC",
                                             "RELU",
                                             "RELU6",
                                             "RELU_N1_TO_1",
                                             "RELU_0_TO_1",
                                             "LEAKY_RELU",
                                             "PRELU",
                                             "ELU",
                                             "HARD_SWISH",
                                             "GELU",
                                             "CONV_2D",
                                             "DEPTHWISE_CONV_2D",
                                             "TRANSPOSE_CONV",
                                             "FULLY_CONNECTED",
                                             "BATCH_MATMUL",
                                             "MAX_POOL_2D",
                                             "AVERAGE_POOL_2D",
                                             "MEAN",
                                             "SUM",
                                             "REDUCE_MAX",
                                             "REDUCE_MIN",
                                             "REDUCE_PROD",
                                             "SOFTMAX",
                                             "LOG_SOFTMAX",
                                             "L2_NORMALIZATION",
                                             "RESHAPE",
                                             "SQUEEZE",
                                             "EXPAND_DIMS",
                                             "TRANSPOSE",
                                             "CONCATENATION",
                                             "SLICE",
                                             "STRIDED_SLICE",
                                             "PAD",
                                             "PADV2",
                                             "MIRROR_PAD",
                                             "SPLIT",
                                             "SPLIT_V",
                                             "PACK",
                                             "UNPACK",
                                             "TILE",
                                             "BROADCAST_TO",
                                             "GATHER",
                                             "GATHER_ND",
                                             "TOPK_V2",
                                             "ARG_MAX",
                                             "ARG_MIN",
                                             "SELECT",
                                             "SELECT_V2",
                                             "CAST",
                                             "EQUAL",
                                             "NOT_EQUAL",
                                             "LESS",
                                             "LESS_EQUAL",
                                             "GREATER",
                                             "GREATER_EQUAL",
                                             "LOGICAL_AND",
                                             "LOGICAL_OR",
                                             "LOGICAL_NOT",
                                             "RESIZE_BILINEAR",
                                             "RESIZE_NEAREST_NEIGHBOR",
                                             "DEPTH_TO_SPACE",
                                             "SPACE_TO_DEPTH",
                                             "CUMSUM",
                                             "DEQUANTIZE",
                                             "DENSIFY",
                                             "Convolution2DTransposeBias",
                                             "MaxPoolingWithArgmax2D",
                                             "MaxUnpooling2D"};
  std::set<std::string> covered;
  size_t single_op = 0, multi_op = 0;
  for (const OpCase& c : AllCases()) {
    ir::Model model = c.build();
    for (const ir::Op& op : model.main().ops) covered.insert(op.name());
    (model.main().ops.size() == 1 ? single_op : multi_op)++;
  }
  for (const std::string& op : required) EXPECT_TRUE(covered.count(op)) << op << " has no LiteRT.js case";
  EXPECT_GE(single_op, 25u);
  EXPECT_GE(multi_op, 1u);
}

}  // namespace
}  // namespace gpuclean::testing
