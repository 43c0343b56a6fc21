// ctest-labels: litert
// onnxruntime's contrib ops (src/onnx/contrib_ops.cc), each written as
// onnxruntime's transformer optimizer writes it and proven against
// onnxruntime, which implements them; the ones it does not implement on
// CPU stay one clear refusal.
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

constexpr const char* kMs = "com.microsoft";

struct ContribCase {
  std::string name;
  std::function<void(OnnxTestModel&)> build;
};

std::ostream& operator<<(std::ostream& os, const ContribCase& c) { return os << c.name; }

class ContribOp : public ::testing::TestWithParam<ContribCase> {};

TEST_P(ContribOp, ExpandsAndMatchesOnnxruntime) {
  OnnxTestModel m;
  GetParam().build(m);
  testing::TempDir dir;
  convert::Options o;
  o.onnx_path = m.Write(dir.file(GetParam().name + ".onnx"));
  o.target = "none";
  const convert::Result r = convert::Convert(o);
  EXPECT_TRUE(r.report.proven) << r.report.RenderText();
}

void Vectors(OnnxTestModel& m, int64_t d) {
  m.Input("x", {2, 3, d});
  m.InitF32("b", {d}, RandomValues(d, 21, 0.5f));
}

std::vector<ContribCase> CasesContribOps() {
  return {
      {"gelu",
       [](OnnxTestModel& m) {
         m.Input("x", {2, 16});
         m.Node("Gelu", {"x"}, {"y"}, kMs);
         m.Output("y");
       }},
      {"fastgelu_bias",
       [](OnnxTestModel& m) {
         Vectors(m, 16);
         m.Node("FastGelu", {"x", "b"}, {"y"}, kMs);
         m.Output("y");
       }},
      {"fastgelu",
       [](OnnxTestModel& m) {
         m.Input("x", {2, 16});
         m.Node("FastGelu", {"x"}, {"y"}, kMs);
         m.Output("y");
       }},
      {"biasgelu",
       [](OnnxTestModel& m) {
         Vectors(m, 16);
         m.Node("BiasGelu", {"x", "b"}, {"y"}, kMs);
         m.Output("y");
       }},
      {"quickgelu",
       [](OnnxTestModel& m) {
         m.Input("x", {2, 16});
         m.Node("QuickGelu", {"x"}, {"y"}, kMs).Float("alpha", 1.5f);
         m.Output("y");
       }},
      {"skiplayernorm",
       [](OnnxTestModel& m) {
         m.Input("x", {1, 4, 16});
         m.Input("skip", {1, 4, 16});
         m.InitF32("gamma", {16}, RandomValues(16, 22, 1.0f));
         m.InitF32("beta", {16}, RandomValues(16, 23, 0.5f));
         m.InitF32("bias", {16}, RandomValues(16, 24, 0.5f));
         m.Node("SkipLayerNormalization", {"x", "skip", "gamma", "beta", "bias"}, {"y", "", "", "sum"}, kMs)
             .Float("epsilon", 1e-5f);
         m.Output("y");
         m.Output("sum");
       }},
      {"skipsimplifiedlayernorm",
       [](OnnxTestModel& m) {
         m.Input("x", {1, 4, 16});
         m.Input("skip", {1, 4, 16});
         m.InitF32("gamma", {16}, RandomValues(16, 25, 1.0f));
         m.Node("SkipSimplifiedLayerNormalization", {"x", "skip", "gamma"}, {"y"}, kMs).Float("epsilon", 1e-6f);
         m.Output("y");
       }},
      {"simplifiedlayernorm",
       [](OnnxTestModel& m) {
         m.Input("x", {2, 3, 16});
         m.InitF32("scale", {16}, RandomValues(16, 26, 1.0f));
         m.Node("SimplifiedLayerNormalization", {"x", "scale"}, {"y"}).Float("epsilon", 1e-6f).Int("axis", -1);
         m.Output("y");
       }},
      {"fusedmatmul",
       [](OnnxTestModel& m) {
         m.Input("a", {2, 4, 8});
         m.Input("b", {2, 6, 8});
         m.Node("FusedMatMul", {"a", "b"}, {"y"}, kMs).Int("transB", 1).Float("alpha", 0.5f);
         m.Output("y");
       }},
      {"fusedconv_relu",
       [](OnnxTestModel& m) {
         m.Input("x", {1, 3, 8, 8});
         m.InitF32("w", {4, 3, 3, 3}, RandomValues(108, 27, 0.5f));
         m.InitF32("bias", {4}, RandomValues(4, 28, 0.5f));
         m.Node("FusedConv", {"x", "w", "bias"}, {"y"}, kMs).Ints("pads", {1, 1, 1, 1}).Str("activation", "Relu");
         m.Output("y");
       }},
      {"fusedconv_clip",
       [](OnnxTestModel& m) {
         m.Input("x", {1, 3, 8, 8});
         m.InitF32("w", {4, 3, 3, 3}, RandomValues(108, 29, 0.5f));
         m.InitF32("bias", {4}, RandomValues(4, 30, 0.5f));
         m.Node("FusedConv", {"x", "w", "bias"}, {"y"}, kMs)
             .Ints("pads", {1, 1, 1, 1})
             .Str("activation", "Clip")
             .Floats("activation_params", {-0.5f, 0.5f});
         m.Output("y");
       }},
      {"fusedconv_leakyrelu",
       [](OnnxTestModel& m) {
         m.Input("x", {1, 3, 8, 8});
         m.InitF32("w", {4, 3, 3, 3}, RandomValues(108, 31, 0.5f));
         m.Node("FusedConv", {"x", "w"}, {"y"}, kMs)
             .Ints("strides", {2, 2})
             .Str("activation", "LeakyRelu")
             .Floats("activation_params", {0.1f});
         m.Output("y");
       }},
      {"attention",
       [](OnnxTestModel& m) {
         m.Input("x", {1, 5, 16});
         m.InitF32("w", {16, 48}, RandomValues(16 * 48, 32, 0.3f));
         m.InitF32("bias", {48}, RandomValues(48, 33, 0.3f));
         m.Node("Attention", {"x", "w", "bias"}, {"y"}, kMs).Int("num_heads", 2);
         m.Output("y");
       }},
      {"attention_unidirectional",
       [](OnnxTestModel& m) {
         m.Input("x", {1, 5, 16});
         m.InitF32("w", {16, 48}, RandomValues(16 * 48, 34, 0.3f));
         m.InitF32("bias", {48}, RandomValues(48, 35, 0.3f));
         m.Node("Attention", {"x", "w", "bias"}, {"y"}, kMs).Int("num_heads", 4).Int("unidirectional", 1);
         m.Output("y");
       }},
      {"multiheadattention",
       [](OnnxTestModel& m) {
         m.Input("q", {1, 5, 16});
         m.Input("k", {1, 7, 16});
         m.Input("v", {1, 7, 16});
         m.InitF32("bias", {48}, RandomValues(48, 36, 0.3f));
         m.Node("MultiHeadAttention", {"q", "k", "v", "bias"}, {"y"}, kMs).Int("num_heads", 4);
         m.Output("y");
       }},
  };
}

INSTANTIATE_TEST_SUITE_P(Microsoft, ContribOp, ::testing::ValuesIn(CasesContribOps()),
                         [](const ::testing::TestParamInfo<ContribCase>& info) { return info.param.name; });

// BiasSplitGelu has a CUDA kernel only: nothing to prove it against here.
TEST(ContribOps, OpsOnnxruntimeCannotRunOnCpuAreRefused) {
  OnnxTestModel m;
  Vectors(m, 16);
  m.Node("BiasSplitGelu", {"x", "b"}, {"y"}, kMs);
  m.Output("y");
  testing::TempDir dir;
  convert::Options o;
  o.onnx_path = m.Write(dir.file("bsg.onnx"));
  try {
    convert::Convert(o);
    FAIL() << "converted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("BiasSplitGelu"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gpuclean
