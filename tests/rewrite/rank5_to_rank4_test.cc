#include "gpuclean/builder.h"
#include "gpuclean/synth.h"
#include "rewrite/pass_proof.h"
#include "support/arrays.h"

namespace gpuclean::rewrite {
namespace {

using builder::GraphBuilder;
constexpr auto F32 = tfl::TensorType_FLOAT32;

int MaxRank(const ir::Model& m) {
  int r = 0;
  for (const ir::Tensor& t : m.main().tensors) r = std::max(r, t.rank());
  return r;
}

// Pure data movement: the rewritten graph must give the same bits.
void ExpectRank4AndBitIdentical(const ir::Model& model, const std::vector<int64_t>& input_shape) {
  const npy::Array x = synth::HashUniform(input_shape, -4, 4, 71);
  const testing::PassProof proof = testing::ExpectPassProven("rank5-to-rank4", model, {x});
  EXPECT_LE(MaxRank(proof.rewritten), 4);
  EXPECT_EQ(testing::RunOurs(model, {x})[0].data, testing::RunOurs(proof.rewritten, {x})[0].data);
  testing::ExpectFindingGone(model, proof.rewritten, "rank-5");
}

// Swin / Hiera window partition: [B,H,W,C] -> [B,H/w,w,W/w,w,C] ->
// (0,1,3,2,4,5) -> [B*nh*nw, w, w, C].
TEST(Rank5ToRank4, RewritesA6DWindowPartition) {
  GraphBuilder b;
  const int x = b.Input("x", F32, {2, 8, 12, 3});
  const int six = b.Reshape(x, {2, 2, 4, 3, 4, 3});
  const int moved = b.Transpose(six, {0, 1, 3, 2, 4, 5});
  b.Output(b.Reshape(moved, {12, 4, 4, 3}));
  const ir::Model model = b.Finish();
  ExpectRank4AndBitIdentical(model, {2, 8, 12, 3});
}

// Fused QKV: [B,N,3*H*D] -> [B,N,3,H,D] -> (2,0,3,1,4) -> [3,B,H,N,D] -> [3,H,N,D].
TEST(Rank5ToRank4, RewritesAFusedQkvHeadSplit) {
  GraphBuilder b;
  const int x = b.Input("x", F32, {1, 5, 24});
  const int five = b.Reshape(x, {1, 5, 3, 2, 4});
  const int moved = b.Transpose(five, {2, 0, 3, 1, 4});
  b.Output(b.Reshape(moved, {3, 2, 5, 4}));
  const ir::Model model = b.Finish();
  ExpectRank4AndBitIdentical(model, {1, 5, 24});
}

// Pixel shuffle in NHWC: [B,H,W,r*r*C] -> [B,H,W,r,r,C] -> (0,1,3,2,4,5) ->
// [B,H,r,W,r,C] -> [B,H*r,W*r,C], with an activation on the 6-D tensor.
TEST(Rank5ToRank4, RewritesAPixelShuffleWithAnActivation) {
  GraphBuilder b;
  const int x = b.Input("x", F32, {1, 3, 4, 8});
  const int six = b.Relu(b.Reshape(x, {1, 3, 4, 2, 2, 2}));
  const int moved = b.Transpose(six, {0, 1, 3, 2, 4, 5});
  b.Output(b.Reshape(b.Reshape(moved, {1, 3, 2, 4, 4}), {1, 6, 8, 2}));
  const ir::Model model = b.Finish();
  ExpectRank4AndBitIdentical(model, {1, 3, 4, 8});
  ir::Model rewritten = model;
  FindPass("rank5-to-rank4")->Apply(rewritten, {});
  EXPECT_EQ(testing::CountOps(rewritten, tfl::BuiltinOperator_RELU), 1);
  EXPECT_EQ(testing::CountOps(rewritten, tfl::BuiltinOperator_TRANSPOSE), 1);
}

TEST(Rank5ToRank4, FixesTheMicroProbe) {
  const ir::Model model = synth::Build("rank5-reshape");
  ExpectRank4AndBitIdentical(model, {1, 2, 3, 4});
}

// Reversing five axes of size > 1 keeps no two adjacent: no 4-D form.
TEST(Rank5ToRank4, LeavesAnIrreducibleTransposeAlone) {
  GraphBuilder b;
  const int x = b.Input("x", F32, {2, 3, 20});
  b.Output(b.Reshape(b.Transpose(b.Reshape(x, {2, 3, 2, 5, 2}), {4, 3, 2, 1, 0}), {2, 5, 2, 6}));
  ir::Model model = b.Finish();
  EXPECT_TRUE(FindPass("rank5-to-rank4")->Apply(model, {}).sites.empty());
  EXPECT_EQ(MaxRank(model), 5);
}

// The 5-D tensor is read twice: no single chain, but every reader is
// elementwise or a reshape back, so it is an island computed whole at 4-D.
TEST(Rank5ToRank4, RewritesAFannedOutChainAsAnIsland) {
  GraphBuilder b;
  const int x = b.Input("x", F32, {1, 2, 3, 4});
  const int five = b.Reshape(x, {1, 2, 3, 2, 2});
  b.Output(b.Reshape(b.Relu(five), {1, 2, 3, 4}));
  b.Output(b.Reshape(b.Tanh(five), {1, 2, 3, 4}));
  const ir::Model model = b.Finish();
  ExpectRank4AndBitIdentical(model, {1, 2, 3, 4});
}

// The 5-D tensor is also a graph output: it has to stay 5-D.
TEST(Rank5ToRank4, LeavesAFiveDimensionalGraphOutputAlone) {
  GraphBuilder b;
  const int x = b.Input("x", F32, {1, 2, 3, 4});
  const int five = b.Relu(b.Reshape(x, {1, 2, 3, 2, 2}));
  b.Output(b.Reshape(b.Tanh(five), {1, 2, 3, 4}));
  b.Output(five);
  ir::Model model = b.Finish();
  const PassResult r = FindPass("rank5-to-rank4")->Apply(model, {});
  EXPECT_TRUE(r.sites.empty());
  ASSERT_EQ(r.skipped.size(), 1u);
  EXPECT_NE(r.skipped[0].why.find("is a graph output"), std::string::npos) << r.skipped[0].why;
}

// Islands: elementwise ops on rank-5 tensors between reshapes.

// Group-wise affine as converters emit it: [1,4,4,8] -> [1,4,4,2,4], times a
// per-(group, channel) gamma [2,4], plus a per-group beta [2,1], times a
// runtime 4-D scale broadcast over H, then back. gamma and beta broadcast
// over H and W alike, so H and W merge; the group axis stays apart from the
// channel axis because beta is full on one and broadcast on the other.
TEST(Rank5ToRank4, RewritesAnElementwiseIslandWithBroadcastOperands) {
  GraphBuilder b;
  const int x = b.Input("x", F32, {1, 4, 4, 8});
  const int scale = b.Input("scale", F32, {1, 1, 2, 4});
  const int five = b.Reshape(x, {1, 4, 4, 2, 4});
  std::vector<float> gamma(8), beta = {0.5f, -1.25f};
  for (int i = 0; i < 8; ++i) gamma[i] = 0.25f * static_cast<float>(i) - 0.8f;
  int y = b.Mul(five, b.ConstF32("gamma", {2, 4}, gamma));
  y = b.Add(y, b.ConstF32("beta", {2, 1}, beta), tfl::ActivationFunctionType_RELU);
  y = b.Mul(y, b.Reshape(scale, {1, 1, 1, 2, 4}));
  b.Output(b.Reshape(y, {1, 4, 4, 8}));
  ir::Model model = b.Finish();
  // The reshaped scale is an island entry too; one more runtime input form.
  const std::vector<npy::Array> inputs = {synth::HashUniform({1, 4, 4, 8}, -4, 4, 72),
                                          synth::HashUniform({1, 1, 2, 4}, -2, 2, 73)};
  const testing::PassProof proof = testing::ExpectPassProven("rank5-to-rank4", model, inputs);
  EXPECT_LE(MaxRank(proof.rewritten), 4);
  EXPECT_EQ(testing::RunOurs(model, inputs)[0].data, testing::RunOurs(proof.rewritten, inputs)[0].data);
  testing::ExpectFindingGone(model, proof.rewritten, "rank-5");
  ASSERT_EQ(proof.result.sites.size(), 1u);
  EXPECT_NE(proof.result.sites[0].what.find("computed at [16,2,4]"), std::string::npos) << proof.result.sites[0].what;
}

// Two runtime tensors meet on the 5-D view (a residual inside a head
// split), with a unary op, a rank-4 runtime operand and two exits.
TEST(Rank5ToRank4, RewritesAnIslandWithTwoEntriesAndTwoExits) {
  GraphBuilder b;
  const int x = b.Input("x", F32, {1, 6, 8});
  const int r = b.Input("r", F32, {1, 6, 8});
  const int bias = b.Input("bias", F32, {3, 1, 4});
  const int sum = b.Add(b.Reshape(x, {1, 2, 3, 2, 4}), b.Reshape(r, {1, 2, 3, 2, 4}));
  const int act = b.Tanh(sum);
  b.Output(b.Reshape(b.Sub(act, bias), {1, 6, 8}));
  b.Output(b.Reshape(sum, {2, 3, 8}));
  ir::Model model = b.Finish();
  const std::vector<npy::Array> inputs = {synth::HashUniform({1, 6, 8}, -4, 4, 74),
                                          synth::HashUniform({1, 6, 8}, -4, 4, 75),
                                          synth::HashUniform({3, 1, 4}, -1, 1, 76)};
  const testing::PassProof proof = testing::ExpectPassProven("rank5-to-rank4", model, inputs);
  EXPECT_LE(MaxRank(proof.rewritten), 4);
  const auto before = testing::RunOurs(model, inputs), after = testing::RunOurs(proof.rewritten, inputs);
  EXPECT_EQ(before[0].data, after[0].data);
  EXPECT_EQ(before[1].data, after[1].data);
  testing::ExpectFindingGone(model, proof.rewritten, "rank-5");
}

// A constant full on axes 0, 2, 4 and broadcast on 1, 3: no two adjacent
// axes share a pattern, so five axes remain.
TEST(Rank5ToRank4, LeavesAnIslandWhoseBroadcastKeepsFiveAxesAlone) {
  GraphBuilder b;
  const int x = b.Input("x", F32, {2, 3, 20});
  std::vector<float> c(2 * 2 * 5, 0.5f);
  const int y = b.Mul(b.Reshape(x, {2, 3, 2, 2, 5}), b.ConstF32("c", {2, 1, 2, 1, 5}, c));
  b.Output(b.Reshape(y, {2, 3, 20}));
  ir::Model model = b.Finish();
  const PassResult r = FindPass("rank5-to-rank4")->Apply(model, {});
  EXPECT_TRUE(r.sites.empty());
  ASSERT_EQ(r.skipped.size(), 1u);
  EXPECT_NE(r.skipped[0].why.find("leave 5 axes"), std::string::npos) << r.skipped[0].why;
  EXPECT_EQ(MaxRank(model), 5);
}

// A reduction over a 5-D axis is not elementwise: the island cannot be
// computed at another rank by merging axes alone.
TEST(Rank5ToRank4, LeavesAnIslandWithAReductionAlone) {
  GraphBuilder b;
  const int x = b.Input("x", F32, {1, 4, 4, 8});
  const int five = b.Relu(b.Reshape(x, {1, 4, 4, 2, 4}));
  b.Output(b.Reshape(b.Mean(b.Add(five, five), {4}, true), {1, 4, 4, 2}));
  ir::Model model = b.Finish();
  const PassResult r = FindPass("rank5-to-rank4")->Apply(model, {});
  EXPECT_TRUE(r.sites.empty());
  ASSERT_EQ(r.skipped.size(), 1u);
  EXPECT_NE(r.skipped[0].why.find("MEAN"), std::string::npos) << r.skipped[0].why;
}

// Fused QKV as our ONNX lowering and other converters emit it: [B,N,3C] ->
// [B,N,3,H,D], q/k/v picked by SLICEs on the 3, each reshaped to 4-D and
// one scaled on the 5-D view. Each slice is one contiguous range of
// [B*N, 3, H*D], so the island runs at rank 3.
TEST(Rank5ToRank4, RewritesQkvSlicesOfAFiveDimensionalView) {
  GraphBuilder b;
  const int x = b.Input("x", F32, {2, 5, 24});
  const int five = b.Reshape(x, {2, 5, 3, 2, 4});
  for (int i = 0; i < 3; ++i) {
    int pick = b.Slice(five, {0, 0, i, 0, 0}, {2, 5, 1, 2, 4});
    if (i == 0) pick = b.Mul(pick, b.ConstF32("scale", {1}, {0.5f}));
    b.Output(b.Reshape(pick, {2, 5, 2, 4}));
  }
  const ir::Model model = b.Finish();
  const npy::Array in = synth::HashUniform({2, 5, 24}, -4, 4, 77);
  const testing::PassProof proof = testing::ExpectPassProven("rank5-to-rank4", model, {in});
  EXPECT_LE(MaxRank(proof.rewritten), 4);
  const auto before = testing::RunOurs(model, {in}), after = testing::RunOurs(proof.rewritten, {in});
  for (size_t i = 0; i < before.size(); ++i) EXPECT_EQ(before[i].data, after[i].data) << i;
  testing::ExpectFindingGone(model, proof.rewritten, "rank-5");
  ASSERT_EQ(proof.result.sites.size(), 1u);
  EXPECT_NE(proof.result.sites[0].what.find("computed at [10,3,8]"), std::string::npos) << proof.result.sites[0].what;
}

// A slice that cuts two adjacent axes with partial windows: they cannot
// share a run, and with a third cut axis five runs remain.
TEST(Rank5ToRank4, LeavesSlicesThatCutFiveAxesAlone) {
  GraphBuilder b;
  const int x = b.Input("x", F32, {2, 3, 60});
  const int five = b.Reshape(x, {2, 3, 3, 4, 5});
  const int pick = b.Slice(five, {1, 1, 1, 1, 1}, {1, 2, 2, 3, 4});
  b.Output(b.Reshape(pick, {1, 2, 24}));
  ir::Model model = b.Finish();
  const PassResult r = FindPass("rank5-to-rank4")->Apply(model, {});
  EXPECT_TRUE(r.sites.empty());
  ASSERT_EQ(r.skipped.size(), 1u);
  EXPECT_NE(r.skipped[0].why.find("leave 5 axes"), std::string::npos) << r.skipped[0].why;
}

// A slice keeping the tail of one axis and the whole of the next: one
// merged range [2*20, 2*20 + 1*20) of the 3*20 axis, not two cuts.
TEST(Rank5ToRank4, MergesASlicedAxisWithTheWholeAxesAfterIt) {
  GraphBuilder b;
  const int x = b.Input("x", F32, {1, 2, 60});
  const int five = b.Reshape(x, {1, 2, 3, 4, 5});
  b.Output(b.Reshape(b.Slice(five, {0, 0, 2, 0, 0}, {-1, -1, 1, -1, -1}), {1, 2, 20}));
  const ir::Model model = b.Finish();
  ExpectRank4AndBitIdentical(model, {1, 2, 60});
}

}  // namespace
}  // namespace gpuclean::rewrite
