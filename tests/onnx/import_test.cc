// ctest-labels: litert
// ONNX import: older opsets are converted to the canonical one (and their
// semantics kept, as onnxruntime runs the original), external weights load
// from the model's folder.
#include <gtest/gtest.h>

#include "gpuclean/convert.h"
#include "onnx/onnx_test_model.h"
#include "support/test_support.h"

namespace gpuclean {
namespace {

using testing::OnnxTestModel;
using testing::RandomValues;

class OlderOpset : public ::testing::TestWithParam<int> {};

TEST_P(OlderOpset, ConvertsWithTheOriginalSemantics) {
  const int opset = GetParam();
  testing::TempDir dir;
  OnnxTestModel m(opset);
  m.Input("x", {1, 3, 6, 6});
  m.InitF32("w", {4, 3, 3, 3}, RandomValues(108, 5, 0.5f));
  m.Node("Conv", {"x", "w"}, {"c"}).Ints("pads", {1, 1, 1, 1});
  m.Node("Relu", {"c"}, {"r"});
  m.Node("MaxPool", {"r"}, {"p"}).Ints("kernel_shape", {2, 2}).Ints("strides", {2, 2});
  // Before opset 13, Softmax flattens everything from `axis` on into one
  // dimension: softmax over C*H*W, not over C.
  m.Node("Softmax", {"p"}, {"s"}).Int("axis", 1);
  if (opset < 13) {
    m.Node("Unsqueeze", {"s"}, {"u"}).Ints("axes", {0});
    m.Node("Squeeze", {"u"}, {"y"}).Ints("axes", {0});
  } else {
    m.InitI64("axes", {1}, {0});
    m.Node("Unsqueeze", {"s", "axes"}, {"u"});
    m.Node("Squeeze", {"u", "axes"}, {"y"});
  }
  m.Output("y");
  convert::Options o;
  o.onnx_path = m.Write(dir.file("old.onnx"));
  const convert::Result r = convert::Convert(o);
  EXPECT_EQ(r.report.original_opset, opset);
  EXPECT_EQ(r.report.opset, 17);
  EXPECT_TRUE(r.report.proven) << r.report.RenderText();
}

INSTANTIATE_TEST_SUITE_P(Opsets, OlderOpset, ::testing::Values(9, 11, 13, 17));

TEST(Import, ExternalDataInTheModelsFolderLoads) {
  testing::TempDir dir;
  OnnxTestModel m;
  m.Input("x", {1, 32});
  m.InitF32("w", {32, 16}, RandomValues(512, 7, 0.3f));
  m.InitF32("b", {16}, RandomValues(16, 8, 0.3f));
  m.Node("Gemm", {"x", "w", "b"}, {"y"});
  m.Output("y");
  m.MoveWeightsToExternalData(dir.path().string(), "weights.bin");
  convert::Options o;
  o.onnx_path = m.Write(dir.file("ext.onnx"));
  const convert::Result r = convert::Convert(o);
  EXPECT_TRUE(r.report.proven) << r.report.RenderText();
}

}  // namespace
}  // namespace gpuclean
