// ctest-labels: litert slow
// The proof's noise floor (docs/convert.md, "The noise floor") lets an
// ill-conditioned model's fp32 noise through and nothing else: M-LSD's line
// offsets differ by 0.017 between two onnxruntime sessions, so its faithful
// conversion proves only under the floor; one corrupted weight in the same
// .tflite, or a reduction over the wrong axis, must still fail.
#include <gtest/gtest.h>

#include <filesystem>
#include <span>

#include "gpuclean/convert.h"
#include "gpuclean/format.h"
#include "onnx/onnx_test_model.h"
#include "support/test_support.h"

namespace gpuclean {
namespace {
namespace fs = std::filesystem;

using testing::OnnxCache;

TEST(ProofBound, NoiseFloorPassesFaithfulConversionAndFailsACorruptedWeight) {
  const fs::path onnx = OnnxCache() / "npm" / "mlsd_tiny_320.onnx";
  ASSERT_TRUE(fs::exists(onnx)) << onnx << " missing: run tools/fetch_npm_onnx.sh";
  convert::Options o;
  o.onnx_path = onnx.string();
  o.target = "none";
  const convert::Result r = convert::Convert(o);
  ASSERT_TRUE(r.report.proven) << r.report.RenderText();
  bool floor_used = false;
  for (const convert::OutputProof& p : r.report.proof) floor_used = floor_used || p.bound > r.report.atol;
  EXPECT_TRUE(floor_used) << "M-LSD proved under the fixed bound: the noise floor is no longer exercised";

  // One bias element of the first convolution moved by 0.05.
  ir::Model corrupted = r.model;
  ir::Tensor* bias = testing::FirstConstInput(corrupted, tfl::BuiltinOperator_CONV_2D, 2);
  ASSERT_NE(bias, nullptr);
  std::vector<float> v(bias->data->as<float>().begin(), bias->data->as<float>().end());
  v[0] += 0.05f;
  bias->data = Bytes::FromValues(std::span<const float>(v));
  const convert::Report bad = convert::ProveConverted(onnx.string(), corrupted, o);
  EXPECT_FALSE(bad.proven) << bad.RenderText();
  EXPECT_TRUE(convert::ProveConverted(onnx.string(), r.model, o).proven);
}

TEST(ProofBound, AReductionOverTheWrongAxisFails) {
  testing::OnnxTestModel m;
  m.Input("x", {1, 4, 4});
  m.InitI64("axes", {1}, {1});
  m.Node("ReduceSum", {"x", "axes"}, {"y"}).Int("keepdims", 1);
  m.Output("y");
  testing::TempDir dir;
  convert::Options o;
  o.onnx_path = m.Write(dir.file("sum.onnx"));
  o.target = "none";
  const convert::Result r = convert::Convert(o);
  ASSERT_TRUE(r.report.proven);
  ir::Model wrong = r.model;
  ir::Tensor* axes = testing::FirstConstInput(wrong, tfl::BuiltinOperator_SUM, 1);
  ASSERT_NE(axes, nullptr);
  const std::vector<int32_t> two = {2};
  axes->data = Bytes::FromValues(std::span<const int32_t>(two));
  const convert::Report bad = convert::ProveConverted(o.onnx_path, wrong, o);
  EXPECT_FALSE(bad.proven) << bad.RenderText();
}

}  // namespace
}  // namespace gpuclean
