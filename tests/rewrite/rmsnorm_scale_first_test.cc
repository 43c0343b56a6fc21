// ctest-labels: litert
#include <cmath>

#include "gpuclean/builder.h"
#include "gpuclean/exec.h"
#include "gpuclean/synth.h"
#include "rewrite/pass_proof.h"
#include "support/arrays.h"
#include "support/tflite_names.h"

namespace gpuclean::rewrite {
namespace {

using builder::GraphBuilder;
using ::gpuclean::testing::tflite_names::F32;

void ExpectFixesFp16RmsnormScaleFirst(const ir::Model& model, const std::vector<npy::Array>& inputs) {
  EXPECT_LT(testing::Fp16Correlation(model, model, inputs), 0.999) << "the pattern should break in fp16";
  const testing::PassProof proof = testing::ExpectPassProven("rmsnorm-scale-first", model, inputs);
  EXPECT_EQ(proof.result.sites.size(), 1u);
  EXPECT_GE(testing::Fp16Correlation(model, proof.rewritten, inputs), 0.999);
  // Bit-identical in fp32: the scale is a power of two.
  EXPECT_EQ(testing::RunOurs(model, inputs)[0].data, testing::RunOurs(proof.rewritten, inputs)[0].data);
}

TEST(RmsNormScaleFirst, FixesTheRmsNorm274Pattern) {
  const synth::SynthGraph& g = *synth::Find("rmsnorm-274");
  ExpectFixesFp16RmsnormScaleFirst(g.build(), g.inputs());
}

enum class Spelling { kSquare, kPow, kSqrtDiv };

ir::Model Rms(Spelling spelling) {
  GraphBuilder b;
  const int x = b.Input("x", F32, {1, 8, 64});
  const int sq = spelling == Spelling::kSquare ? b.Square(x)
                 : spelling == Spelling::kPow  ? b.Pow(x, b.ConstF32("two", {}, {2.0f}))
                                               : b.Mul(x, x);
  const int ve = b.Add(b.Mean(sq, {-1}, true), b.ConstF32("eps", {1}, {1e-6f}));
  const int y = spelling == Spelling::kSqrtDiv ? b.Div(x, b.Sqrt(ve)) : b.Mul(b.Rsqrt(ve), x);
  std::vector<float> gamma(64);
  for (int c = 0; c < 64; ++c) gamma[c] = 0.6f + 0.015f * c;
  b.Output(b.Mul(y, b.ConstF32("gamma", {64}, gamma)));
  return b.Finish();
}

TEST(RmsNormScaleFirst, MatchesTheConverterSpellings) {
  for (Spelling s : {Spelling::kSquare, Spelling::kPow, Spelling::kSqrtDiv}) {
    SCOPED_TRACE(static_cast<int>(s));
    ExpectFixesFp16RmsnormScaleFirst(Rms(s), {synth::HashUniform({1, 8, 64}, -600, 600, 61)});
  }
}

TEST(RmsNormScaleFirst, IsExactOnSmallSignedInputs) {
  const ir::Model model = Rms(Spelling::kSquare);
  const npy::Array x = synth::HashUniform({1, 8, 64}, -1, 1, 62);
  const testing::PassProof proof = testing::ExpectPassProven("rmsnorm-scale-first", model, {x});
  EXPECT_EQ(testing::RunOurs(model, {x})[0].data, testing::RunOurs(proof.rewritten, {x})[0].data);
}

// The squared tensor is not the one normalised: not an RMSNorm.
TEST(RmsNormScaleFirst, LeavesAMismatchedSquareAlone) {
  GraphBuilder b;
  const int x = b.Input("x", F32, {1, 4, 8});
  const int z = b.Input("z", F32, {1, 4, 8});
  b.Output(b.Mul(x, b.Rsqrt(b.Add(b.Mean(b.Mul(z, z), {-1}, true), b.ConstF32("eps", {}, {1e-6f})))));
  ir::Model model = b.Finish();
  EXPECT_TRUE(FindPass("rmsnorm-scale-first")->Apply(model, {}).sites.empty());
  EXPECT_EQ(testing::CountOps(model, tfl::BuiltinOperator_REDUCE_MAX), 0);
}

TEST(RmsNormScaleFirst, DoesNotRewriteItsOwnOutput) {
  ir::Model model = synth::Build("rmsnorm-274");
  ASSERT_EQ(FindPass("rmsnorm-scale-first")->Apply(model, {}).sites.size(), 1u);
  EXPECT_TRUE(FindPass("rmsnorm-scale-first")->Apply(model, {}).sites.empty());
}

}  // namespace
}  // namespace gpuclean::rewrite
