// ctest-labels: litert
// Conv + Relu, Gemm + Clip(0, 6) and Add + Relu as exporters write them
// become one TFLite op with a fused activation (proven against onnxruntime,
// and the result run on LiteRT.js against our interpreter); an activation
// whose input something else reads too, or that is a graph output, stays.
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

tfl::ActivationFunctionType ActivationOf(const ir::Model& m, tfl::BuiltinOperator code) {
  for (const ir::Op& op : m.main().ops) {
    if (op.code != code) continue;
    if (const auto* o = op.options.AsConv2DOptions()) return o->fused_activation_function;
    if (const auto* o = op.options.AsFullyConnectedOptions()) return o->fused_activation_function;
    if (const auto* o = op.options.AsAddOptions()) return o->fused_activation_function;
  }
  ADD_FAILURE() << "no " << tfl::EnumNameBuiltinOperator(code);
  return tfl::ActivationFunctionType_NONE;
}

// Conv -> Relu -> Gemm -> Clip(0, 6) -> Add(itself + bias) -> Relu: every
// activation has one reader, so each folds.
OnnxTestModel Chain(bool relu_read_twice) {
  OnnxTestModel m;
  m.Input("x", {1, 3, 6, 6});
  m.InitF32("w", {4, 3, 3, 3}, RandomValues(4 * 3 * 3 * 3, 1));
  m.InitF32("b", {4}, RandomValues(4, 2));
  m.Node("Conv", {"x", "w", "b"}, {"c"});
  m.Node("Relu", {"c"}, {"r"});
  m.InitI64("flat", {2}, {1, 64});
  m.Node("Reshape", {"r", "flat"}, {"f"});
  m.InitF32("fw", {64, 10}, RandomValues(64 * 10, 3, 0.5f));
  m.InitF32("fb", {10}, RandomValues(10, 4));
  m.Node("Gemm", {"f", "fw", "fb"}, {"g"});
  m.InitF32("lo", {}, {0.0f});
  m.InitF32("hi", {}, {6.0f});
  m.Node("Clip", {"g", "lo", "hi"}, {"g6"});
  m.InitF32("bias", {10}, RandomValues(10, 5));
  m.Node("Add", {"g6", "bias"}, {"s"});
  m.Node("Relu", {"s"}, {"y"});
  m.Output("y");
  if (relu_read_twice) m.Output("c");  // the conv's own output is wanted too
  return m;
}

TEST(FoldActivations, EachActivationBecomesItsProducersFusedActivation) {
  testing::TempDir dir;
  const convert::Result r = testing::ConvertWithoutTarget(Chain(false), "chain.onnx", dir);
  ASSERT_TRUE(r.report.proven) << r.report.RenderText();
  EXPECT_EQ(testing::CountOp(r.report, "RELU"), 0) << r.report.RenderText();
  EXPECT_EQ(testing::CountOp(r.report, "RELU6"), 0) << r.report.RenderText();
  EXPECT_EQ(ActivationOf(r.model, tfl::BuiltinOperator_CONV_2D), tfl::ActivationFunctionType_RELU);
  EXPECT_EQ(ActivationOf(r.model, tfl::BuiltinOperator_FULLY_CONNECTED), tfl::ActivationFunctionType_RELU6);
  EXPECT_EQ(ActivationOf(r.model, tfl::BuiltinOperator_ADD), tfl::ActivationFunctionType_RELU);
  // The output keeps the ONNX name; the tensors no op writes any more are gone.
  const ir::Subgraph& g = r.model.main();
  EXPECT_EQ(g.tensors[g.outputs[0]].name, "y");
  for (const ir::Tensor& t : g.tensors) EXPECT_NE(t.name, "c") << "the conv's pre-activation tensor is left over";
  // Inputs straddling zero and six, so every clamp matters.
  npy::Array x;
  x.dtype = tfl::TensorType_FLOAT32;
  x.shape = {1, 3, 6, 6};
  const std::vector<float> values = RandomValues(108, 7, 6.0f);
  x.data.resize(values.size() * sizeof(float));
  std::memcpy(x.data.data(), values.data(), x.data.size());
  testing::ExpectMatchesLiteRt(r.model, {x});
}

TEST(FoldActivations, AnActivationWhoseInputIsReadElsewhereStays) {
  testing::TempDir dir;
  const convert::Result r = testing::ConvertWithoutTarget(Chain(true), "read_twice.onnx", dir);
  ASSERT_TRUE(r.report.proven) << r.report.RenderText();
  EXPECT_EQ(testing::CountOp(r.report, "RELU"), 1) << r.report.RenderText();
  EXPECT_EQ(ActivationOf(r.model, tfl::BuiltinOperator_CONV_2D), tfl::ActivationFunctionType_NONE);
  EXPECT_EQ(ActivationOf(r.model, tfl::BuiltinOperator_ADD), tfl::ActivationFunctionType_RELU);
}

}  // namespace
}  // namespace gpuclean
