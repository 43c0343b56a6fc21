// ctest-labels: litert webgpu
#include <cmath>

#include "gpuclean/builder.h"
#include "gpuclean/synth.h"
#include "rewrite/pass_proof.h"
#include "support/tflite_names.h"

namespace gpuclean::rewrite {
namespace {

using builder::GraphBuilder;
using ::gpuclean::testing::tflite_names::F32;

// Integer-valued weights in [-127, 127], as a quantized model's codes.
std::vector<float> Codes(size_t n, uint32_t seed) {
  const npy::Array a = synth::HashUniform({static_cast<int32_t>(n)}, -127, 127, seed);
  std::vector<float> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = std::round(a.as<float>()[i]);
  return out;
}

// uint8 codes of x, clipped as QuantizeLinear clips them.
int Codes(GraphBuilder& b, int x) {
  const int rounded = b.Round(b.Mul(x, b.ConstF32("to_codes", {}, {255.0f})));
  return b.Minimum(b.Maximum(rounded, b.ConstF32("lo", {}, {0.0f})), b.ConstF32("hi", {}, {255.0f}));
}

// What onnxruntime's quantize_dynamic leaves after lowering: uint8 codes of
// x, a convolution of codes by codes, a shape-preserving RESHAPE, then the
// product of the two scales (a runtime value: x's scale is measured).
ir::Model DynamicQuantizedConv(bool with_bias) {
  GraphBuilder b;
  const int x = b.Input("x", F32, {1, 16, 16, 32});
  const int scale = b.Input("scale", F32, {1, 1, 1, 1});
  const int codes = Codes(b, x);
  const int w = b.ConstF32("w", {8, 3, 3, 32}, Codes(8 * 3 * 3 * 32, 71));
  const int bias = with_bias ? b.ConstF32("bias", {8}, std::vector<float>(8, 0.5f)) : builder::kNoInput;
  const int sums = b.Conv2D(codes, w, bias, tfl::Padding_SAME, 1, 1);
  b.Output(b.Mul(b.Reshape(sums, {1, 16, 16, 8}), scale));
  return b.Finish();
}

std::vector<npy::Array> Inputs() {
  npy::Array scale = synth::HashUniform({1, 1, 1, 1}, 0, 1, 73);
  scale.as<float>()[0] = 1.0f / 255 / 127;
  return {synth::HashUniform({1, 16, 16, 32}, 0, 1, 72), scale};
}

TEST(DotScaleFirst, KeepsADynamicallyQuantizedConvolutionFiniteInFp16) {
  const ir::Model model = DynamicQuantizedConv(false);
  EXPECT_LT(testing::Fp16Correlation(model, model, Inputs()), 0.999) << "sums of code products overflow half";
  const testing::PassProof proof = testing::ExpectPassProven("dot-scale-first", model, Inputs());
  EXPECT_EQ(proof.result.sites.size(), 1u);
  EXPECT_GE(testing::Fp16Correlation(model, proof.rewritten, Inputs()), 0.999);
  // Powers of two: every partial sum is the original's scaled exactly.
  EXPECT_EQ(testing::RunOurs(model, Inputs())[0].data, testing::RunOurs(proof.rewritten, Inputs())[0].data);
}

// The real WebGPU delegate in fp16 (LiteRT.js 2.5.3 in headless Chromium,
// SwiftShader without shader-f16) computes a conv and the elementwise ops it
// fuses in float and stores half at the chain's end (its numeric model,
// fp16-fused): there the original is right too, as our fp16-fused run
// predicts. The pass is for fp16-compute targets (ML Drift's OpenCL
// default); on WebGPU it must stay right.
TEST(DotScaleFirst, BothFormsAreRightOnWebGpuAsFp16FusedPredicts) {
  const ir::Model model = DynamicQuantizedConv(false);
  ir::Model rewritten = model;
  ASSERT_EQ(FindPass("dot-scale-first")->Apply(rewritten, {}).sites.size(), 1u);
  const std::vector<double> corr = testing::WebGpuCorrelations({model, rewritten}, {Inputs(), Inputs()}, "fp16");
  EXPECT_GE(corr[0], 0.999);
  EXPECT_GE(corr[1], 0.999);
  const std::vector<npy::Array> fused =
      testing::RunOurs(model, Inputs(), exec::InterpreterOptions{.precision = exec::Precision::kFp16Fused});
  EXPECT_GE(testing::Compare(testing::RunOurs(model, Inputs())[0], fused[0]).correlation, 0.999);
}

TEST(DotScaleFirst, MovesTheScaleOfAMatMulOfAnyRank) {
  GraphBuilder b;
  const int a = b.Input("a", F32, {2, 8, 64});
  const int w = b.ConstF32("w", {1, 64, 16}, Codes(64 * 16, 74));
  b.Output(b.Mul(b.ConstF32("scale", {1, 1, 1, 1}, {1e-4f}), b.BatchMatMul(Codes(b, a), w)));
  const ir::Model model = b.Finish();
  const std::vector<npy::Array> inputs = {synth::HashUniform({2, 8, 64}, 0, 1, 75)};
  const testing::PassProof proof = testing::ExpectPassProven("dot-scale-first", model, inputs);
  EXPECT_EQ(proof.rewritten.main().tensors[proof.rewritten.main().outputs[0]].shape,
            (builder::Shape{1, 2, 8, 16}));  // the MUL's broadcast shape, kept
}

// A non-zero bias would have to be scaled too; a dot product read by
// something else keeps its unscaled value; float activations have no static
// bound, and sums that fit half need nothing.
TEST(DotScaleFirst, LeavesABiasedSharedUnboundedOrSmallDotProductAlone) {
  ir::Model biased = DynamicQuantizedConv(true);
  EXPECT_TRUE(FindPass("dot-scale-first")->Apply(biased, {}).sites.empty());

  for (bool clipped : {false, true}) {
    GraphBuilder f;
    const int x = f.Input("x", F32, {1, 4, 4, 8});
    const int in = clipped ? f.Relu6(x) : x;
    f.Output(
        f.Mul(f.Conv2D(in, f.ConstF32("w", {4, 1, 1, 8}, Codes(32, 77)), builder::kNoInput, tfl::Padding_SAME, 1, 1),
              f.ConstF32("scale", {}, {0.01f})));
    ir::Model m = f.Finish();
    EXPECT_TRUE(FindPass("dot-scale-first")->Apply(m, {}).sites.empty())
        << (clipped ? "6 * 8 * 127 fits" : "unbounded");
  }

  GraphBuilder b;
  const int x = Codes(b, b.Input("x", F32, {1, 4, 4, 8}));
  const int sums =
      b.Conv2D(x, b.ConstF32("w", {4, 1, 1, 8}, Codes(32, 76)), builder::kNoInput, tfl::Padding_SAME, 1, 1);
  b.Output(b.Mul(sums, b.ConstF32("scale", {}, {0.01f})));
  b.Output(sums);
  ir::Model shared = b.Finish();
  EXPECT_TRUE(FindPass("dot-scale-first")->Apply(shared, {}).sites.empty());
}

}  // namespace
}  // namespace gpuclean::rewrite
