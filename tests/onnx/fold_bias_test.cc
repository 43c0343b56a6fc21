// ctest-labels: litert
// MatMul + Add(bias) (+ Relu) as exporters write a dense layer becomes one
// FULLY_CONNECTED with a bias (and a fused activation), proven against
// onnxruntime, the result run on LiteRT.js against our interpreter; an Add
// of anything but a row of N constants, or a MatMul read twice, stays.
#include <gtest/gtest.h>

#include <cstring>

#include "gpuclean/convert.h"
#include "onnx/onnx_test_model.h"
#include "onnx/op_test_util.h"
#include "support/conformance.h"
#include "support/test_support.h"

namespace gpuclean {
namespace {

using testing::OnnxTestModel;
using testing::RandomValues;

enum class BiasShape { kRow, kRank3Row, kFull };

// x [2, 5, 8] @ w [8, 6] + bias, then Relu.
OnnxTestModel DenseLayer(BiasShape shape, bool matmul_read_twice = false) {
  OnnxTestModel m;
  m.Input("x", {2, 5, 8});
  m.InitF32("w", {8, 6}, RandomValues(48, 1, 0.5f));
  m.Node("MatMul", {"x", "w"}, {"xw"});
  switch (shape) {
    case BiasShape::kRow: m.InitF32("b", {6}, RandomValues(6, 2)); break;
    case BiasShape::kRank3Row: m.InitF32("b", {1, 1, 6}, RandomValues(6, 2)); break;
    case BiasShape::kFull: m.InitF32("b", {5, 6}, RandomValues(30, 2)); break;
  }
  m.Node("Add", {"xw", "b"}, {"s"});
  m.Node("Relu", {"s"}, {"y"});
  m.Output("y");
  if (matmul_read_twice) m.Output("xw");
  return m;
}

npy::Array Input(uint32_t seed) {
  npy::Array x;
  x.dtype = tfl::TensorType_FLOAT32;
  x.shape = {2, 5, 8};
  const std::vector<float> values = RandomValues(80, seed, 2.0f);
  x.data.resize(values.size() * sizeof(float));
  std::memcpy(x.data.data(), values.data(), x.data.size());
  return x;
}

TEST(FoldBias, MatMulAddReluBecomesOneFullyConnected) {
  testing::TempDir dir;
  for (BiasShape shape : {BiasShape::kRow, BiasShape::kRank3Row}) {
    const convert::Result r = testing::ConvertWithoutTarget(DenseLayer(shape), "dense.onnx", dir);
    ASSERT_TRUE(r.report.proven) << r.report.RenderText();
    EXPECT_EQ(testing::CountOp(r.report, "ADD"), 0) << r.report.RenderText();
    EXPECT_EQ(testing::CountOp(r.report, "RELU"), 0) << r.report.RenderText();
    ASSERT_EQ(testing::CountOp(r.report, "FULLY_CONNECTED"), 1) << r.report.RenderText();
    for (const ir::Op& op : r.model.main().ops) {
      if (op.code != tfl::BuiltinOperator_FULLY_CONNECTED) continue;
      ASSERT_EQ(op.inputs.size(), 3u);
      ASSERT_GE(op.inputs[2], 0);
      EXPECT_EQ(r.model.main().tensors[op.inputs[2]].shape, (std::vector<int32_t>{6}));
      EXPECT_EQ(op.options.AsFullyConnectedOptions()->fused_activation_function, tfl::ActivationFunctionType_RELU);
    }
    testing::ExpectMatchesLiteRt(r.model, {Input(3)});
  }
}

TEST(FoldBias, AnAddOfAFullTensorOrAMatMulReadTwiceStays) {
  testing::TempDir dir;
  const convert::Result full = testing::ConvertWithoutTarget(DenseLayer(BiasShape::kFull), "full.onnx", dir);
  ASSERT_TRUE(full.report.proven) << full.report.RenderText();
  EXPECT_EQ(testing::CountOp(full.report, "ADD"), 1) << full.report.RenderText();
  EXPECT_EQ(testing::CountOp(full.report, "RELU"), 0) << "the Relu still folds into the ADD";
  const convert::Result twice = testing::ConvertWithoutTarget(DenseLayer(BiasShape::kRow, true), "twice.onnx", dir);
  ASSERT_TRUE(twice.report.proven) << twice.report.RenderText();
  EXPECT_EQ(testing::CountOp(twice.report, "ADD"), 1) << twice.report.RenderText();
}

}  // namespace
}  // namespace gpuclean
