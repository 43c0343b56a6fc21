// ctest-labels: litert
// Opset adaptation (src/onnx/opset_adapt.cc): each op whose semantics moved
// between opset 7 and 21, written the way its own opset writes it, converts
// and is proven against onnxruntime running the original model. Also the
// import order: an unsorted node list converts, a cycle is one clear error.
#include <gtest/gtest.h>

#include <functional>

#include "gpuclean/convert.h"
#include "gpuclean/error.h"
#include "onnx/onnx_test_model.h"
#include "support/test_support.h"

namespace gpuclean {
namespace {

using testing::OnnxTestModel;
using testing::RandomValues;

struct CaseOpsetAdapt {
  std::string name;
  int opset;
  std::function<void(OnnxTestModel&)> build;
};

std::ostream& operator<<(std::ostream& os, const CaseOpsetAdapt& c) { return os << c.name; }

class OpsetForm : public ::testing::TestWithParam<CaseOpsetAdapt> {};

TEST_P(OpsetForm, ConvertsAndMatchesOnnxruntime) {
  const CaseOpsetAdapt& c = GetParam();
  testing::TempDir dir;
  OnnxTestModel m(c.opset);
  c.build(m);
  convert::Options o;
  o.onnx_path = m.Write(dir.file(c.name + ".onnx"));
  o.target = "none";
  const convert::Result r = convert::Convert(o);
  EXPECT_EQ(r.report.original_opset, c.opset);
  EXPECT_TRUE(r.report.proven) << r.report.RenderText();
}

std::vector<CaseOpsetAdapt> CasesOpsetAdapt() {
  return {
      // PaddleOCR's case: the Softmax input's shape comes from a Reshape to
      // a computed shape that ONNX shape inference does not follow, so
      // libonnx's 12->13 adapter could not convert it. Before 13 it
      // normalises over everything from axis 1 on.
      {"softmax9_unknown_shape", 9,
       [](OnnxTestModel& m) {
         m.Input("x", {1, 3, 4, 5});
         m.InitI64("one", {4}, {1, 1, 1, 1});
         m.Node("Shape", {"x"}, {"s"});
         m.Node("Div", {"s", "one"}, {"s2"});
         m.Node("Reshape", {"x", "s2"}, {"r"});
         m.Node("Softmax", {"r"}, {"y"}).Int("axis", 1);
         m.Output("y");
       }},
      {"logsoftmax11_default_axis", 11,
       [](OnnxTestModel& m) {
         m.Input("x", {2, 3, 4});
         m.Node("LogSoftmax", {"x"}, {"y"});
         m.Output("y");
       }},
      {"softmax11_last_axis", 11,
       [](OnnxTestModel& m) {
         m.Input("x", {2, 3, 4});
         m.Node("Softmax", {"x"}, {"y"}).Int("axis", 2);
         m.Output("y");
       }},
      {"clip9_attributes", 9,
       [](OnnxTestModel& m) {
         m.Input("x", {1, 16});
         m.Node("Clip", {"x"}, {"y"}).Float("min", -0.25f).Float("max", 0.5f);
         m.Output("y");
       }},
      {"pad9_attributes", 9,
       [](OnnxTestModel& m) {
         m.Input("x", {1, 2, 3, 3});
         m.Node("Pad", {"x"}, {"y"}).Ints("pads", {0, 0, 1, 2, 0, 0, 2, 1}).Float("value", 0.75f);
         m.Output("y");
       }},
      {"slice9_attributes", 9,
       [](OnnxTestModel& m) {
         m.Input("x", {2, 6, 5});
         m.Node("Slice", {"x"}, {"y"}).Ints("starts", {1, 0}).Ints("ends", {5, 3}).Ints("axes", {1, 2});
         m.Output("y");
       }},
      {"topk9_attribute", 9,
       [](OnnxTestModel& m) {
         m.Input("x", {2, 10});
         m.Node("TopK", {"x"}, {"v", "i"}).Int("k", 3);
         m.Output("v");
       }},
      {"split11_attribute", 11,
       [](OnnxTestModel& m) {
         m.Input("x", {1, 7, 4});
         m.Node("Split", {"x"}, {"a", "b"}).Int("axis", 1).Ints("split", {3, 4});
         m.Node("Mul", {"a", "a"}, {"a2"});
         m.Output("a2");
         m.Output("b");
       }},
      {"squeeze_unsqueeze11_attributes", 11,
       [](OnnxTestModel& m) {
         m.Input("x", {1, 3, 1, 4});
         m.Node("Squeeze", {"x"}, {"s"}).Ints("axes", {0, 2});
         m.Node("Unsqueeze", {"s"}, {"y"}).Ints("axes", {1});
         m.Output("y");
       }},
      {"reducesum11_attribute", 11,
       [](OnnxTestModel& m) {
         m.Input("x", {2, 3, 4});
         m.Node("ReduceSum", {"x"}, {"y"}).Ints("axes", {1}).Int("keepdims", 0);
         m.Output("y");
       }},
      {"upsample9_scales_input", 9,
       [](OnnxTestModel& m) {
         m.Input("x", {1, 2, 3, 4});
         m.InitF32("scales", {4}, {1, 1, 2, 2});
         m.Node("Upsample", {"x", "scales"}, {"y"}).Str("mode", "nearest");
         m.Output("y");
       }},
      {"upsample7_scales_attribute", 7,
       [](OnnxTestModel& m) {
         m.Input("x", {1, 2, 3, 4});
         m.Node("Upsample", {"x"}, {"y"}).Floats("scales", {1, 1, 2, 2}).Str("mode", "linear");
         m.Output("y");
       }},
      {"resize10_linear", 10,
       [](OnnxTestModel& m) {
         m.Input("x", {1, 2, 3, 4});
         m.InitF32("scales", {4}, {1, 1, 2, 2});
         m.Node("Resize", {"x", "scales"}, {"y"}).Str("mode", "linear");
         m.Output("y");
       }},
      {"dropout10_ratio_attribute", 10,
       [](OnnxTestModel& m) {
         m.Input("x", {2, 8});
         m.Node("Dropout", {"x"}, {"y"}).Float("ratio", 0.3f);
         m.Output("y");
       }},
      {"batchnorm7_spatial", 7,
       [](OnnxTestModel& m) {
         m.Input("x", {1, 3, 4, 4});
         m.InitF32("s", {3}, {1.5f, 0.5f, 1.0f});
         m.InitF32("b", {3}, {0.1f, -0.2f, 0.3f});
         m.InitF32("mean", {3}, {0.05f, -0.1f, 0.2f});
         m.InitF32("var", {3}, {1.2f, 0.8f, 0.5f});
         m.Node("BatchNormalization", {"x", "s", "b", "mean", "var"}, {"y"}).Int("spatial", 1);
         m.Output("y");
       }},
      {"reducemean18_axes_input", 18,
       [](OnnxTestModel& m) {
         m.Input("x", {2, 3, 4});
         m.InitI64("axes", {1}, {-1});
         m.Node("ReduceMean", {"x", "axes"}, {"y"}).Int("keepdims", 1);
         m.Output("y");
       }},
      {"reducemax18_no_axes", 18,
       [](OnnxTestModel& m) {
         m.Input("x", {2, 3, 4});
         m.Node("ReduceMax", {"x"}, {"y"}).Int("keepdims", 0);
         m.Output("y");
       }},
      {"split18_uneven_num_outputs", 18,
       [](OnnxTestModel& m) {
         m.Input("x", {1, 7, 4});
         m.Node("Split", {"x"}, {"a", "b", "c"}).Int("axis", 1).Int("num_outputs", 3);
         m.Output("a");
         m.Output("b");
         m.Output("c");
       }},
      // The axis size is not known at import (a Reshape to a computed
      // shape): the parts are slices computed from Shape(x).
      {"split18_num_outputs_unknown_size", 18,
       [](OnnxTestModel& m) {
         m.Input("x", {1, 7, 4});
         m.InitI64("one", {3}, {1, 1, 1});
         m.Node("Shape", {"x"}, {"s"});
         m.Node("Div", {"s", "one"}, {"s2"});
         m.Node("Reshape", {"x", "s2"}, {"r"});
         m.Node("Split", {"r"}, {"a", "b", "c"}).Int("axis", -2).Int("num_outputs", 3);
         m.Output("a");
         m.Output("b");
         m.Output("c");
       }},
      {"pad18_axes_input", 18,
       [](OnnxTestModel& m) {
         m.Input("x", {1, 2, 3, 3});
         m.InitI64("pads", {4}, {1, 2, 2, 1});
         m.InitI64("axes", {2}, {2, 3});
         m.Node("Pad", {"x", "pads", "", "axes"}, {"y"}).Str("mode", "reflect");
         m.Output("y");
       }},
      {"resize18_axes", 18,
       [](OnnxTestModel& m) {
         m.Input("x", {1, 2, 3, 4});
         m.InitF32("scales", {2}, {2, 1.5f});
         m.Node("Resize", {"x", "", "scales"}, {"y"}).Ints("axes", {2, 3}).Str("mode", "linear");
         m.Output("y");
       }},
      {"groupnorm18_per_group", 18,
       [](OnnxTestModel& m) {
         m.Input("x", {1, 6, 3, 3});
         m.InitF32("scale", {3}, {1.5f, 0.5f, 2.0f});
         m.InitF32("bias", {3}, {0.1f, -0.2f, 0.3f});
         m.Node("GroupNormalization", {"x", "scale", "bias"}, {"y"}).Int("num_groups", 3).Float("epsilon", 1e-5f);
         m.Output("y");
       }},
      {"groupnorm21_per_channel", 21,
       [](OnnxTestModel& m) {
         m.Input("x", {1, 4, 3, 3});
         m.InitF32("scale", {4}, {1.5f, 0.5f, 2.0f, 1.0f});
         m.InitF32("bias", {4}, {0.1f, -0.2f, 0.3f, 0.0f});
         m.Node("GroupNormalization", {"x", "scale", "bias"}, {"y"}).Int("num_groups", 2);
         m.Output("y");
       }},
      {"gelu20_exact", 20,
       [](OnnxTestModel& m) {
         m.Input("x", {2, 16});
         m.Node("Gelu", {"x"}, {"y"});
         m.Output("y");
       }},
      {"gelu20_tanh", 20,
       [](OnnxTestModel& m) {
         m.Input("x", {2, 16});
         m.Node("Gelu", {"x"}, {"y"}).Str("approximate", "tanh");
         m.Output("y");
       }},
      {"mish18", 18,
       [](OnnxTestModel& m) {
         m.Input("x", {2, 16});
         m.Node("Mish", {"x"}, {"y"});
         m.Output("y");
       }},
      {"opset21_conv_block", 21,
       [](OnnxTestModel& m) {
         m.Input("x", {1, 3, 6, 6});
         m.InitF32("w", {4, 3, 3, 3}, RandomValues(108, 5, 0.5f));
         m.Node("Conv", {"x", "w"}, {"c"}).Ints("pads", {1, 1, 1, 1});
         m.Node("Relu", {"c"}, {"r"});
         m.Node("Flatten", {"r"}, {"f"});
         m.Node("Softmax", {"f"}, {"y"});
         m.Output("y");
       }},
  };
}

INSTANTIATE_TEST_SUITE_P(Adapt, OpsetForm, ::testing::ValuesIn(CasesOpsetAdapt()),
                         [](const ::testing::TestParamInfo<CaseOpsetAdapt>& info) { return info.param.name; });

// PyTorch 2.0 exports with fp16 Casts wrote node lists out of order;
// onnxruntime sorts them itself.
TEST(ImportOrder, AnUnsortedGraphConverts) {
  testing::TempDir dir;
  OnnxTestModel m;
  m.Input("x", {1, 8});
  m.Node("Mul", {"t", "t"}, {"y"});
  m.Node("Relu", {"s"}, {"t"});
  m.Node("Sigmoid", {"x"}, {"s"});
  m.Output("y");
  convert::Options o;
  o.onnx_path = m.Write(dir.file("unsorted.onnx"));
  o.target = "none";
  EXPECT_TRUE(convert::Convert(o).report.proven);
}

TEST(ImportOrder, ACycleIsOneClearError) {
  testing::TempDir dir;
  OnnxTestModel m;
  m.Input("x", {1, 8});
  m.Node("Add", {"x", "b"}, {"a"});
  m.Node("Relu", {"a"}, {"b"});
  m.Output("b");
  convert::Options o;
  o.onnx_path = m.Write(dir.file("cycle.onnx"));
  try {
    convert::Convert(o);
    FAIL() << "a cycle converted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadInput);
    EXPECT_NE(std::string(e.what()).find("cycle"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
  }
}

TEST(OpsetRange, AnOpWithNoOpset17FormIsRefusedByName) {
  testing::TempDir dir;
  OnnxTestModel m(19);
  m.Input("x", {1, 2, 3, 4});
  m.InitF32("scales", {4}, {1, 1, 2, 2});
  m.Node("Resize", {"x", "", "scales"}, {"y"}).Int("antialias", 1).Str("mode", "linear");
  m.Output("y");
  convert::Options o;
  o.onnx_path = m.Write(dir.file("antialias.onnx"));
  try {
    convert::Convert(o);
    FAIL() << "antialiased Resize converted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("antialias"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gpuclean
