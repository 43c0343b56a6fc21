// ctest-labels: litert
#include "gpuclean/builder.h"
#include "gpuclean/synth.h"
#include "rewrite/pass_proof.h"
#include "support/arrays.h"
#include "support/tflite_names.h"

namespace gpuclean::rewrite {
namespace {

using builder::GraphBuilder;
using ::gpuclean::testing::tflite_names::F32;

struct Case {
  const char* name;
  builder::Shape input;  // NHWC
  int32_t kh, kw, stride_h, stride_w;
  tfl::Padding padding;
  int32_t out_h, out_w;
  bool bias;
  builder::Activation act;
};

// Weights without symmetry, so an unflipped or transposed kernel shows.
std::vector<float> RampTransposeConvZeroStuff(size_t n, float step, float offset) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = offset + step * static_cast<float>((i * 7) % 23);
  return v;
}

ir::Model Upsampler(const Case& c, int32_t out_c = 3) {
  GraphBuilder b;
  int x = b.Input("x", F32, c.input);
  const int32_t in_c = c.input[3];
  int w = b.ConstF32("w", {out_c, c.kh, c.kw, in_c},
                     RampTransposeConvZeroStuff(static_cast<size_t>(out_c) * c.kh * c.kw * in_c, 0.05f, -0.5f));
  int bias = c.bias ? b.ConstF32("b", {out_c}, RampTransposeConvZeroStuff(out_c, 0.3f, -0.4f)) : builder::kNoInput;
  b.Output(
      b.TransposeConv(x, w, bias, {c.input[0], c.out_h, c.out_w, out_c}, c.padding, c.stride_w, c.stride_h, c.act));
  return b.Finish();
}

npy::Array InputTransposeConvZeroStuff(const builder::Shape& shape, uint32_t seed) {
  return synth::HashUniform(std::vector<int64_t>(shape.begin(), shape.end()), -4, 4, seed);
}

TEST(TransposeConvZeroStuff, EveryPaddingKernelAndOutputShapeVariant) {
  const auto relu = tfl::ActivationFunctionType_RELU;
  const auto none = builder::kNoActivation;
  const Case cases[] = {
      {"stride 2 SAME, odd kernel", {1, 4, 5, 2}, 3, 3, 2, 2, tfl::Padding_SAME, 8, 10, false, none},
      {"stride 2 SAME, even kernel, bias, ReLU", {1, 4, 4, 3}, 4, 4, 2, 2, tfl::Padding_SAME, 8, 8, true, relu},
      {"stride 2 SAME, odd output (2H - 1)", {1, 4, 4, 2}, 3, 3, 2, 2, tfl::Padding_SAME, 7, 7, true, none},
      {"stride 2 VALID, odd kernel", {1, 3, 4, 2}, 3, 3, 2, 2, tfl::Padding_VALID, 7, 9, true, none},
      {"stride 2 VALID, even kernel", {2, 3, 3, 2}, 2, 2, 2, 2, tfl::Padding_VALID, 6, 6, false, none},
      {"stride 2 VALID, extra output row and column", {1, 3, 3, 2}, 3, 3, 2, 2, tfl::Padding_VALID, 8, 8, true, none},
      {"strides 2x3, kernel 3x2, SAME", {1, 3, 4, 2}, 3, 2, 2, 3, tfl::Padding_SAME, 6, 12, true, none},
      {"stride 1 SAME", {1, 5, 5, 2}, 3, 3, 1, 1, tfl::Padding_SAME, 5, 5, true, none},
  };
  uint32_t seed = 1;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const ir::Model model = Upsampler(c);
    const testing::PassProof proof =
        testing::ExpectPassProven("transpose-conv-zero-stuff", model, {InputTransposeConvZeroStuff(c.input, seed++)});
    EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_TRANSPOSE_CONV), 0);
    EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_CONV_2D), 1);
    for (const ir::Tensor& t : proof.rewritten.main().tensors) EXPECT_LE(t.rank(), 4) << t.name;
    testing::ExpectFindingGone(model, proof.rewritten, "transpose-conv");
  }
}

TEST(TransposeConvZeroStuff, FixesTheTransposeConvProbe) {
  const ir::Model model = synth::Build("transpose-conv");
  const testing::PassProof proof =
      testing::ExpectPassProven("transpose-conv-zero-stuff", model, {InputTransposeConvZeroStuff({1, 4, 4, 3}, 20)});
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_TRANSPOSE_CONV), 0);
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_RESIZE_NEAREST_NEIGHBOR), 1);
  testing::ExpectFindingGone(model, proof.rewritten, "transpose-conv");
}

TEST(TransposeConvZeroStuff, LeavesRuntimeWeightsAlone) {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 4, 4, 2});
  int w = b.Input("w", F32, {3, 3, 3, 2});
  b.Output(b.TransposeConv(x, w, builder::kNoInput, {1, 8, 8, 3}, tfl::Padding_SAME, 2, 2));
  ir::Model model = b.Finish();
  const size_t ops = model.main().ops.size();
  EXPECT_TRUE(FindPass("transpose-conv-zero-stuff")->Apply(model, {}).sites.empty());
  EXPECT_EQ(model.main().ops.size(), ops);
}

TEST(TransposeConvZeroStuff, LeavesTheMediaPipeCustomOpAlone) {
  // The GPU delegates take Convolution2DTransposeBias; rewriting it would
  // only cost a larger convolution.
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 4, 4, 2});
  int w = b.ConstF32("w", {3, 2, 2, 2}, RampTransposeConvZeroStuff(24, 0.1f, -1.0f));
  int bias = b.ConstF32("b", {3}, {0.1f, 0.2f, 0.3f});
  b.Output(b.Convolution2DTransposeBias(x, w, bias, tfl::Padding_SAME, 2, 2));
  ir::Model model = b.Finish();
  EXPECT_TRUE(FindPass("transpose-conv-zero-stuff")->Apply(model, {}).sites.empty());
  EXPECT_EQ(model.main().ops.size(), 1u);
}

}  // namespace
}  // namespace gpuclean::rewrite
