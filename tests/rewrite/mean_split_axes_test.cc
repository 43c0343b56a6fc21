// ctest-labels: litert
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

ir::Model Reduction(tfl::BuiltinOperator code, const builder::Shape& shape, const std::vector<int32_t>& axes,
                    bool keep_dims) {
  GraphBuilder b;
  int x = b.Input("x", F32, shape);
  b.Output(b.Reduce(code, x, axes, keep_dims));
  return b.Finish();
}

int SingleAxisReductions(const ir::Model& model, tfl::BuiltinOperator code) {
  int n = 0;
  for (const ir::Op& op : model.main().ops)
    if (op.code == code) {
      EXPECT_EQ(model.main().tensors[op.inputs[1]].num_elements(), 1) << "a reduction over several axes is left";
      ++n;
    }
  return n;
}

TEST(MeanSplitAxes, FixesTheReduceExtentProbe) {
  const ir::Model model = synth::Build("reduce-extent-mean");
  const testing::PassProof proof =
      testing::ExpectPassProven("mean-split-axes", model, {synth::HashUniform({1, 256, 256, 4}, -4, 4, 1)});
  EXPECT_EQ(SingleAxisReductions(proof.rewritten, tfl::BuiltinOperator_MEAN), 2);
  testing::ExpectFindingGone(model, proof.rewritten, "reduce-extent");
}

TEST(MeanSplitAxes, SumWithNegativeAxesAndNoKeptDims) {
  // -1 and 1 on rank 4: channels and height (8192 elements), output [2, 6].
  const ir::Model model = Reduction(tfl::BuiltinOperator_SUM, {2, 128, 6, 64}, {-1, 1}, false);
  const testing::PassProof proof =
      testing::ExpectPassProven("mean-split-axes", model, {synth::HashUniform({2, 128, 6, 64}, -4, 4, 2)});
  EXPECT_EQ(SingleAxisReductions(proof.rewritten, tfl::BuiltinOperator_SUM), 2);
  EXPECT_EQ(proof.result.sites.at(0).what, "2 single-axis SUMs (axes 3, 1)");
}

TEST(MeanSplitAxes, MeanOverThreeAxesKeepingDims) {
  const ir::Model model = Reduction(tfl::BuiltinOperator_MEAN, {2, 64, 40, 3}, {0, 2, 1}, true);
  const testing::PassProof proof =
      testing::ExpectPassProven("mean-split-axes", model, {synth::HashUniform({2, 64, 40, 3}, -4, 4, 3)});
  EXPECT_EQ(SingleAxisReductions(proof.rewritten, tfl::BuiltinOperator_MEAN), 3);
}

TEST(MeanSplitAxes, FixedMean256x256TracksFp32UnderFp16Compute) {
  const synth::SynthGraph& g = *synth::Find("mean-256x256");
  const ir::Model model = g.build();
  const std::vector<npy::Array> inputs = g.inputs();
  const testing::PassProof proof = testing::ExpectPassProven("mean-split-axes", model, inputs);
  auto fp16_correlation = [&](const ir::Model& m) {
    const npy::Array ref = testing::RunOurs(m, inputs)[0];
    const npy::Array got = testing::RunOurs(m, inputs, {.precision = exec::Precision::kFp16Compute})[0];
    return testing::Compare(ref, got).correlation;
  };
  EXPECT_LT(fp16_correlation(model), 0.999) << "the pattern should break before the pass";
  EXPECT_GE(fp16_correlation(proof.rewritten), 0.999);
}

// A GroupNorm(1) as exporters write it: the mean of [1,1,C*H*W]. One
// axis of 173056 is viewed as 416 x 416 and reduced twice; in fp16-compute
// the one long accumulation drifts, the two short ones do not.
TEST(MeanSplitAxes, OneLongAxisIsReducedAsTwo) {
  const ir::Model model = Reduction(tfl::BuiltinOperator_MEAN, {1, 1, 173056}, {2}, true);
  const std::vector<npy::Array> inputs = {synth::HashUniform({1, 1, 173056}, 0, 8, 4)};
  const testing::PassProof proof = testing::ExpectPassProven("mean-split-axes", model, inputs);
  EXPECT_EQ(SingleAxisReductions(proof.rewritten, tfl::BuiltinOperator_MEAN), 2);
  EXPECT_EQ(proof.result.sites.at(0).what, "one MEAN over 173056 elements as 416 x 416 (axis 2)");
  auto fp16_error = [&](const ir::Model& m) {
    const npy::Array ref = testing::RunOurs(m, inputs)[0];
    const npy::Array got = testing::RunOurs(m, inputs, {.precision = exec::Precision::kFp16Compute})[0];
    return std::abs(double(ref.as<float>()[0]) - got.as<float>()[0]) / std::abs(double(ref.as<float>()[0]));
  };
  EXPECT_GT(fp16_error(model), 0.01) << "one half accumulator over 173056 values should drift";
  EXPECT_LT(fp16_error(proof.rewritten), 0.002);
}

TEST(MeanSplitAxes, LeavesShortSingleAxesAndOtherReductionsAlone) {
  for (ir::Model model : {Reduction(tfl::BuiltinOperator_MEAN, {1, 128, 128, 4}, {2}, true),
                          // Long, but prime: no two-axis view.
                          Reduction(tfl::BuiltinOperator_MEAN, {1, 1, 16411}, {2}, true),
                          Reduction(tfl::BuiltinOperator_MEAN, {1, 1, 16417}, {2}, true),
                          // The same axis twice is one axis.
                          Reduction(tfl::BuiltinOperator_SUM, {1, 128, 128, 4}, {2, -2}, false),
                          Reduction(tfl::BuiltinOperator_REDUCE_MAX, {1, 128, 128, 4}, {1, 2}, true),
                          // A squeeze-excite mean over 64x64: small enough to compute right as it is.
                          Reduction(tfl::BuiltinOperator_MEAN, {1, 64, 64, 8}, {1, 2}, true)}) {
    const size_t ops = model.main().ops.size();
    EXPECT_TRUE(FindPass("mean-split-axes")->Apply(model, {}).sites.empty());
    EXPECT_EQ(model.main().ops.size(), ops);
  }
}

}  // namespace
}  // namespace gpuclean::rewrite
