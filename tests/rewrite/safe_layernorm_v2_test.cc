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

// The pass fixes what fp16 breaks and proves exact in fp32.
void ExpectFixesFp16SafeLayernormV2(const ir::Model& model, const std::vector<npy::Array>& inputs, size_t sites = 1) {
  EXPECT_LT(testing::Fp16Correlation(model, model, inputs), 0.999) << "the pattern should break in fp16";
  const testing::PassProof proof = testing::ExpectPassProven("safe-layernorm-v2", model, inputs, sites);
  EXPECT_EQ(proof.result.sites.size(), sites);
  EXPECT_GE(testing::Fp16Correlation(model, proof.rewritten, inputs), 0.999);
  EXPECT_GT(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_REDUCE_MAX), 0);
  // The scale is a power of two: fp32 outputs are the original's bits.
  EXPECT_EQ(testing::RunOurs(model, inputs)[0].data, testing::RunOurs(proof.rewritten, inputs)[0].data);
}

TEST(SafeLayerNormV2, FixesTheLayerNorm256Pattern) {
  const synth::SynthGraph& g = *synth::Find("layernorm-256");
  ExpectFixesFp16SafeLayernormV2(g.build(), g.inputs());
}

TEST(SafeLayerNormV2, FixesTheNafnetLayerNorm512Pattern) {
  const synth::SynthGraph& g = *synth::Find("nafnet-layernorm-512");
  ExpectFixesFp16SafeLayernormV2(g.build(), g.inputs());
}

// The v1 form rebuilds var * S^2; the pass keeps it in the scaled domain.
TEST(SafeLayerNormV2, FixesTheParakeetV1Pattern) {
  const synth::SynthGraph& g = *synth::Find("parakeet-frontend-7000");
  const ir::Model model = g.build();
  EXPECT_LT(testing::Fp16Correlation(model, model, g.inputs()), 0.999);
  const testing::PassProof proof = testing::ExpectPassProven("safe-layernorm-v2", model, g.inputs());
  EXPECT_EQ(proof.result.sites.size(), 1u);
  EXPECT_GE(testing::Fp16Correlation(model, proof.rewritten, g.inputs()), 0.999);
}

// S is a power of two, so the scaled norm is the original scaled exactly:
// fp32 outputs are bit-identical, rows of every magnitude (S from 1 to 2^7).
TEST(SafeLayerNormV2, IsBitIdenticalInFp32) {
  const synth::SynthGraph& g = *synth::Find("nafnet-layernorm-512");
  const ir::Model model = g.build();
  npy::Array x = g.inputs()[0];
  float* v = x.as<float>();
  for (int64_t i = 0; i < x.num_elements(); ++i)
    v[i] = (v[i] - 170.0f) * std::ldexp(1.0f, static_cast<int>(i / 512) % 12 - 2);
  ir::Model rewritten = model;
  ASSERT_EQ(FindPass("safe-layernorm-v2")->Apply(rewritten, {}).sites.size(), 1u);
  const npy::Array a = testing::RunOurs(model, {x})[0], b = testing::RunOurs(rewritten, {x})[0];
  EXPECT_EQ(a.data, b.data);
}

// The scale is built so that no intermediate overflows half: an fp16 run of
// the rewritten norm holds no inf or NaN anywhere, so `bisect` cannot name
// the rewrite's own arithmetic as where the numbers break.
TEST(SafeLayerNormV2, HoldsNoNonFiniteIntermediateInFp16) {
  const synth::SynthGraph& g = *synth::Find("nafnet-layernorm-512");
  ir::Model rewritten = g.build();
  ASSERT_EQ(FindPass("safe-layernorm-v2")->Apply(rewritten, {}).sites.size(), 1u);
  for (const Precision precision : {Precision::kFp16Compute, Precision::kFp16Fused}) {
    exec::InterpreterOptions options;
    options.precision = precision;
    options.fuse_layer_norms = false;
    exec::Interpreter interpreter(std::make_shared<const ir::Model>(rewritten), options);
    interpreter.SetInput(0, g.inputs()[0]);
    int64_t non_finite = 0;
    std::string first;
    interpreter.Invoke([&](int, int tensor, const exec::Tensor& value) {
      const int64_t n = exec::RangeOf(value).non_finite;
      if (n > 0 && first.empty()) first = rewritten.main().tensors[tensor].name;
      non_finite += n;
    });
    EXPECT_EQ(non_finite, 0) << "first at '" << first << "'";
  }
}

enum class Square { kMul, kSquare, kPow, kSquaredDifference };

// LayerNorm over `axes` spelled the way one converter or another does.
ir::Model Norm(const builder::Shape& shape, const std::vector<int32_t>& axes, Square square, bool sqrt_div) {
  GraphBuilder b;
  const int x = b.Input("x", F32, shape);
  const int m = b.Mean(x, axes, true);
  const int d = b.Sub(x, m);
  int sq = -1;
  switch (square) {
    case Square::kMul: sq = b.Mul(d, d); break;
    case Square::kSquare: sq = b.Square(d); break;
    case Square::kPow: sq = b.Pow(d, b.ConstF32("two", {}, {2.0f})); break;
    case Square::kSquaredDifference: sq = b.SquaredDifference(x, m); break;
  }
  const int ve = b.Add(b.ConstF32("eps", {1}, {1e-5f}), b.Mean(sq, axes, true));
  const int y = sqrt_div ? b.Div(d, b.Sqrt(ve)) : b.Mul(b.Rsqrt(ve), d);
  const int channels = shape.back();
  std::vector<float> gamma(channels), beta(channels);
  for (int c = 0; c < channels; ++c) gamma[c] = 0.5f + 0.01f * c, beta[c] = 0.3f - 0.02f * c;
  b.Output(b.Add(b.Mul(y, b.ConstF32("gamma", {channels}, gamma)), b.ConstF32("beta", {channels}, beta)));
  return b.Finish();
}

// Signed inputs around an offset: |x| up to ~600, rows of differing scale.
npy::Array Large(std::vector<int64_t> shape, uint32_t seed) {
  npy::Array a = synth::HashUniform(shape, -150, 600, seed);
  float* v = a.as<float>();
  for (int64_t i = 0; i < a.num_elements(); ++i) v[i] *= 0.6f + 0.1f * static_cast<float>((i / shape.back()) % 5);
  return a;
}

TEST(SafeLayerNormV2, MatchesTheSquareSpellings) {
  for (Square square : {Square::kSquare, Square::kPow, Square::kSquaredDifference}) {
    SCOPED_TRACE(static_cast<int>(square));
    ExpectFixesFp16SafeLayernormV2(Norm({1, 6, 384}, {-1}, square, false), {Large({1, 6, 384}, 51)});
  }
}

TEST(SafeLayerNormV2, MatchesSqrtThenDiv) {
  ExpectFixesFp16SafeLayernormV2(Norm({1, 6, 384}, {2}, Square::kMul, true), {Large({1, 6, 384}, 52)});
}

// InstanceNorm: the statistics run over H and W per channel.
TEST(SafeLayerNormV2, MatchesInstanceNormOverHeightAndWidth) {
  ExpectFixesFp16SafeLayernormV2(Norm({1, 16, 16, 4}, {1, 2}, Square::kMul, false), {Large({1, 16, 16, 4}, 53)});
}

// Small inputs: S = 1, the graph is the same function and the pass must not
// hurt; negative values exercise |x| in the scale.
TEST(SafeLayerNormV2, IsExactOnSmallSignedInputs) {
  const ir::Model model = Norm({2, 3, 8}, {-1}, Square::kMul, false);
  testing::ExpectPassProven("safe-layernorm-v2", model, {synth::HashUniform({2, 3, 8}, -2, 2, 54)});
}

TEST(SafeLayerNormV2, LeavesMeansOverDifferentAxesAlone) {
  GraphBuilder b;
  const int x = b.Input("x", F32, {1, 4, 8});
  const int d = b.Sub(x, b.Mean(x, {2}, true));
  const int v = b.Mean(b.Mul(d, d), {1}, true);
  b.Output(b.Mul(d, b.Rsqrt(b.Add(v, b.ConstF32("eps", {}, {1e-5f})))));
  ir::Model model = b.Finish();
  EXPECT_TRUE(FindPass("safe-layernorm-v2")->Apply(model, {}).sites.empty());
  EXPECT_EQ(testing::CountOps(model, tfl::BuiltinOperator_REDUCE_MAX), 0);
}

TEST(SafeLayerNormV2, LeavesARuntimeEpsAlone) {
  GraphBuilder b;
  const int x = b.Input("x", F32, {1, 4, 8});
  const int eps = b.Input("eps", F32, {1});
  const int d = b.Sub(x, b.Mean(x, {2}, true));
  b.Output(b.Mul(d, b.Rsqrt(b.Add(b.Mean(b.Mul(d, d), {2}, true), eps))));
  ir::Model model = b.Finish();
  EXPECT_TRUE(FindPass("safe-layernorm-v2")->Apply(model, {}).sites.empty());
}

// The pass's output (eps / S^2 is computed at run time) is not matched again.
TEST(SafeLayerNormV2, DoesNotRewriteItsOwnOutput) {
  const synth::SynthGraph& g = *synth::Find("layernorm-256");
  ir::Model model = g.build();
  ASSERT_EQ(FindPass("safe-layernorm-v2")->Apply(model, {}).sites.size(), 1u);
  EXPECT_TRUE(FindPass("safe-layernorm-v2")->Apply(model, {}).sites.empty());
}

}  // namespace
}  // namespace gpuclean::rewrite
