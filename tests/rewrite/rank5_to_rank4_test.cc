// ctest-labels: litert
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <numeric>
#include <random>

#include "gpuclean/builder.h"
#include "gpuclean/synth.h"
#include "rewrite/pass_proof.h"
#include "support/arrays.h"
#include "support/tflite_names.h"

namespace gpuclean::rewrite {
namespace {

using builder::GraphBuilder;
using ::gpuclean::testing::tflite_names::F32;

// The highest tensor rank; each tensor above 4 is named with its producer
// in the test's log.
int MaxRank(const ir::Model& m) {
  int r = 0;
  const ir::Subgraph& g = m.main();
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    r = std::max(r, g.tensors[t].rank());
    if (g.tensors[t].rank() > 4) {
      const int p = g.Producer(static_cast<int>(t));
      std::cout << "  rank " << g.tensors[t].rank() << ": " << g.tensors[t].name << " from "
                << (p < 0 ? std::string("(input)") : g.ops[p].name()) << "\n";
    }
  }
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

// Reversing five axes of size > 1 keeps no two adjacent: five blocks, each
// moved into place by a 4-D transpose of [placed, between, block, rest].
TEST(Rank5ToRank4, DecomposesATransposeOfFiveBlocks) {
  GraphBuilder b;
  const int x = b.Input("x", F32, {2, 3, 20});
  b.Output(b.Reshape(b.Transpose(b.Reshape(x, {2, 3, 2, 5, 2}), {4, 3, 2, 1, 0}), {2, 5, 2, 6}));
  const ir::Model model = b.Finish();
  ExpectRank4AndBitIdentical(model, {2, 3, 20});
  ir::Model rewritten = model;
  const PassResult r = FindPass("rank5-to-rank4")->Apply(rewritten, {});
  ASSERT_FALSE(r.sites.empty());
  EXPECT_NE(r.sites[0].what.find("4-D transposes"), std::string::npos) << r.sites[0].what;
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

// The 5-D tensor is also a graph output: it keeps its shape (the model's
// contract), but everything else is computed at rank 4 and the output is a
// reshape at the end.
TEST(Rank5ToRank4, KeepsTheShapeOfAFiveDimensionalGraphOutput) {
  GraphBuilder b;
  const int x = b.Input("x", F32, {1, 2, 3, 4});
  const int five = b.Relu(b.Reshape(x, {1, 2, 3, 2, 2}));
  b.Output(b.Reshape(b.Tanh(five), {1, 2, 3, 4}));
  b.Output(five);
  const ir::Model model = b.Finish();
  const npy::Array in = synth::HashUniform({1, 2, 3, 4}, -4, 4, 78);
  const testing::PassProof proof = testing::ExpectPassProven("rank5-to-rank4", model, {in});
  EXPECT_EQ(testing::RunOurs(model, {in})[1].data, testing::RunOurs(proof.rewritten, {in})[1].data);
  int above = 0;
  for (const ir::Tensor& t : proof.rewritten.main().tensors) above += t.rank() > 4;
  EXPECT_EQ(above, 1);  // the graph output alone
  bool told = false;
  for (const Skip& skip : proof.result.skipped) told = told || skip.why.find("is a graph output") != std::string::npos;
  EXPECT_TRUE(told);
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
  bool merged = false;  // H and W merge; the group and channel axes stay apart (beta is per group)
  for (const Site& site : proof.result.sites)
    merged = merged || site.what.find("computed at [16,2,4]") != std::string::npos;
  EXPECT_TRUE(merged);
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
// axes share a pattern, so the constant is broadcast first (3-D steps) and
// the product computed on equal shapes.
TEST(Rank5ToRank4, BroadcastsOperandsWhosePatternsLeaveFiveAxes) {
  GraphBuilder b;
  const int x = b.Input("x", F32, {2, 3, 20});
  std::vector<float> c(2 * 2 * 5);
  for (size_t i = 0; i < c.size(); ++i) c[i] = 0.1f * static_cast<float>(i) - 0.7f;
  const int y = b.Mul(b.Reshape(x, {2, 3, 2, 2, 5}), b.ConstF32("c", {2, 1, 2, 1, 5}, c));
  b.Output(b.Reshape(y, {2, 3, 20}));
  ExpectRank4AndBitIdentical(b.Finish(), {2, 3, 20});
}

// A reduction over the last 5-D axis: the axes before it merge.
TEST(Rank5ToRank4, ReducesOverTheLastAxis) {
  GraphBuilder b;
  const int x = b.Input("x", F32, {1, 4, 4, 8});
  const int five = b.Relu(b.Reshape(x, {1, 4, 4, 2, 4}));
  b.Output(b.Reshape(b.Mean(b.Add(five, five), {4}, true), {1, 4, 4, 2}));
  ExpectRank4AndBitIdentical(b.Finish(), {1, 4, 4, 8});
}

// Reduced and kept axes alternating five times: one 3-D reduction per run.
TEST(Rank5ToRank4, ReducesAlternatingAxesOneRunAtATime) {
  GraphBuilder b;
  const int x = b.Input("x", F32, {2, 3, 60});
  const int five = b.Reshape(x, {2, 3, 3, 4, 5});
  b.Output(b.Reshape(b.ReduceMax(five, {1, 3}, false), {2, 15}));
  b.Output(b.Reshape(b.Sum(five, {0, 2, 4}, true), {3, 4}));
  const ir::Model model = b.Finish();
  const npy::Array in = synth::HashUniform({2, 3, 60}, -4, 4, 79);
  const testing::PassProof proof = testing::ExpectPassProven("rank5-to-rank4", model, {in});
  EXPECT_LE(MaxRank(proof.rewritten), 4);
}

// Fused QKV as our ONNX lowering and other converters emit it: [B,N,3C] ->
// [B,N,3,H,D], q/k/v picked by SLICEs on the 3, each reshaped to 4-D and
// one scaled on the 5-D view. Each slice is one contiguous range of
// [B*N, 3*H*D]: each pick is a 2-D slice.
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
  bool contiguous = false;  // each pick is one range of [B*N, 3*H*D]
  for (const Site& site : proof.result.sites)
    contiguous = contiguous || site.what.find("computed at [10,24]") != std::string::npos;
  EXPECT_TRUE(contiguous);
}

// A slice that cuts all five axes: no two can share a run, so it is one
// 3-D slice per cut axis.
TEST(Rank5ToRank4, DecomposesASliceThatCutsFiveAxes) {
  GraphBuilder b;
  const int x = b.Input("x", F32, {2, 3, 60});
  const int five = b.Reshape(x, {2, 3, 3, 4, 5});
  const int pick = b.Slice(five, {1, 1, 1, 1, 1}, {1, 2, 2, 3, 4});
  b.Output(b.Reshape(pick, {1, 2, 24}));
  ExpectRank4AndBitIdentical(b.Finish(), {2, 3, 60});
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

// Window attention as SAM 2's Hiera writes it: a fused qkv projection viewed
// as [B*nW, N, 3, H, D], `unbind(2)` (SPLIT then SQUEEZE, not a Gather),
// scores q @ k^T over [B, nW, H, N, N] with a 5-D relative bias, softmax,
// then @ v and the heads merged back.
TEST(Rank5ToRank4, ComputesUnbindWindowAttentionAtRank4) {
  GraphBuilder b;
  const int x = b.Input("x", F32, {2, 4, 3 * 2 * 3});      // [B*nW, N, 3*H*D] with B=1, nW=2, N=4, H=2, D=3
  const int qkv = b.Reshape(x, {1, 2, 4, 3, 2, 3});        // [B, nW, N, 3, H, D]
  const int heads = b.Transpose(qkv, {3, 0, 1, 4, 2, 5});  // [3, B, nW, H, N, D]
  std::vector<int> qkv_parts = b.Split(heads, 0, 3);
  std::vector<int> qs;
  for (int part : qkv_parts) qs.push_back(b.Squeeze(part, {0}));  // [B, nW, H, N, D]
  std::vector<float> bias(2 * 4 * 4);
  for (size_t i = 0; i < bias.size(); ++i) bias[i] = 0.05f * static_cast<float>(i % 7) - 0.1f;
  int scores = b.BatchMatMul(qs[0], qs[1], false, true);  // [B, nW, H, N, N]
  scores = b.Add(b.Mul(scores, b.ConstF32("scale", {1}, {0.577f})), b.ConstF32("rel_bias", {1, 1, 2, 4, 4}, bias));
  const int attn = b.BatchMatMul(b.Softmax(scores), qs[2]);  // [B, nW, H, N, D]
  const int merged = b.Reshape(b.Transpose(attn, {0, 1, 3, 2, 4}), {2, 4, 6});
  b.Output(merged);
  const ir::Model model = b.Finish();
  const npy::Array in = synth::HashUniform({2, 4, 18}, -2, 2, 80);
  const testing::PassProof proof = testing::ExpectPassProven("rank5-to-rank4", model, {in});
  EXPECT_LE(MaxRank(proof.rewritten), 4);
  testing::ExpectFindingGone(model, proof.rewritten, "rank-5");
}

// MaxViT's grid attention: [B, C, H, W] -> [B, C, gh, ph, gw, pw] -> the
// six-axis permute to [B, gh, gw, ph, pw, C] (two blocks swapped that do
// not merge), a LayerNorm-like scale on the 6-D view, then back.
TEST(Rank5ToRank4, ComputesMaxVitGridPartitionAtRank4) {
  GraphBuilder b;
  const int x = b.Input("x", F32, {1, 3, 4, 6});
  const int six = b.Reshape(x, {1, 3, 2, 2, 3, 2});
  const int grid = b.Transpose(six, {0, 2, 4, 3, 5, 1});  // [1, 2, 3, 2, 2, 3]
  std::vector<float> gamma = {0.5f, -1.5f, 2.0f};
  const int scaled = b.Mul(b.Sub(grid, b.Mean(grid, {5}, true)), b.ConstF32("gamma", {3}, gamma));
  const int back = b.Transpose(scaled, {0, 5, 1, 3, 2, 4});  // [1, 3, 2, 2, 3, 2]
  b.Output(b.Reshape(back, {1, 3, 4, 6}));
  const ir::Model model = b.Finish();
  ExpectRank4AndBitIdentical(model, {1, 3, 4, 6});
}

// Concatenation, PACK and UNPACK along an inner axis of 5-D tensors.
TEST(Rank5ToRank4, ConcatenatesPacksAndUnpacksAtRank4) {
  GraphBuilder b;
  const int x = b.Input("x", F32, {2, 3, 24});
  const int five = b.Reshape(x, {2, 3, 2, 3, 4});
  const int cat = b.Concatenation({five, b.Neg(five)}, 3);                                          // [2,3,2,6,4]
  const int packed = b.Pack({b.Reshape(x, {2, 3, 2, 12}), b.Reshape(b.Abs(x), {2, 3, 2, 12})}, 2);  // [2,3,2,2,12]
  std::vector<int> parts = b.Unpack(five, 2);                                                       // two [2,3,3,4]
  b.Output(b.Reshape(cat, {2, 3, 48}));
  b.Output(b.Reshape(packed, {6, 48}));
  b.Output(b.Add(parts[0], parts[1]));
  ExpectRank4AndBitIdentical(b.Finish(), {2, 3, 24});
}

// PAD, a TILE of five axes (one 2-D tile per axis), a 6-D BROADCAST_TO of a
// runtime tensor, a GATHER with 2-D indices, a STRIDED_SLICE that shrinks an
// axis and a CUMSUM, all on 5-D views.
TEST(Rank5ToRank4, PadsTilesBroadcastsGathersAndSlicesAtRank4) {
  GraphBuilder b;
  const int x = b.Input("x", F32, {2, 3, 24});
  const int five = b.Reshape(x, {2, 3, 2, 3, 4});
  b.Output(b.Reshape(b.Pad(five, {{0, 0}, {1, 0}, {0, 0}, {0, 2}, {0, 0}}), {2, 4, 2, 20}));
  b.Output(b.Reshape(b.Tile(five, {2, 1, 2, 3, 2}), {4, 3, 4, 72}));
  const int small = b.Reshape(b.Slice(x, {0, 0, 0}, {1, 3, 2}), {1, 3, 1, 2, 1, 1});
  b.Output(b.Reshape(b.BroadcastTo(small, {2, 3, 2, 2, 3, 2}), {12, 12}));
  const int idx = b.ConstI32("idx", {2, 2}, {2, 0, 1, 2});
  b.Output(b.Reshape(b.Gather(five, idx, 3), {2, 3, 2, 16}));
  b.Output(b.Reshape(b.StridedSlice(five, {0, 1, 0, 0, 1}, {2, 3, 2, 3, 4}, {1, 1, 1, 2, 2},
                                    builder::StridedSliceMasks{.shrink_axis = 0b00100}),
                     {2, 2, 4}));
  b.Output(b.Reshape(b.Cumsum(five, 3, false, true), {2, 3, 24}));
  ExpectRank4AndBitIdentical(b.Finish(), {2, 3, 24});
}

// An op with no rank-4 form is left at its rank, fed a reshape of the
// tracked value; the ops around it still leave rank 5.
TEST(Rank5ToRank4, LeavesAnOpWithoutARuleAtItsRankAndReducesTheRest) {
  GraphBuilder b;
  const int x = b.Input("x", F32, {1, 4, 6});
  const int five = b.Relu(b.Reshape(x, {2, 2, 1, 2, 3}));
  const int idx = b.ConstI32("idx", {2, 1}, {1, 0});
  b.Output(b.Reshape(b.GatherNd(five, idx), {2, 12}));  // GATHER_ND: no rank rule
  b.Output(b.Reshape(b.Tanh(five), {1, 4, 6}));
  ir::Model model = b.Finish();
  const npy::Array in = synth::HashUniform({1, 4, 6}, -4, 4, 81);
  const testing::PassProof proof = testing::ExpectPassProven("rank5-to-rank4", model, {in});
  bool said = false;
  for (const Skip& skip : proof.result.skipped) said = said || skip.why.find("host") != std::string::npos;
  EXPECT_TRUE(said);
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_RELU), 1);
}

// Property: random chains of reducible ops on rank-5 and rank-6 tensors
// (broadcasting elementwise, transpose, softmax, concat/split, slice,
// reduce, batch matmul, gather, pad, tile), many chains in one model so one
// LiteRT.js run checks them all. Afterwards no tensor is above rank 4 and
// the outputs agree with the original on our interpreter and on LiteRT.js.
class RandomChain {
 public:
  RandomChain(GraphBuilder& b, uint32_t seed) : b_(b), rng_(seed) {}

  // Adds one chain: an input [1, E] viewed at rank 5 or 6, `steps` ops, and
  // a [1, E'] output. Returns the input's element count.
  int64_t Add(int steps, int index) {
    const int rank = Pick(5, 6);
    Shape shape;
    for (int d = 0; d < rank; ++d) shape.push_back(Pick(1, 3));
    int64_t n = 1;
    for (int32_t d : shape) n *= d;
    const int x = b_.Input(fmt::format("x{}", index), F32, {1, static_cast<int32_t>(n)});
    int t = b_.Reshape(x, shape);
    for (int i = 0; i < steps; ++i) t = Step(t);
    b_.Output(b_.Reshape(t, {1, static_cast<int32_t>(Elements(t))}));
    return n;
  }

 private:
  using Shape = std::vector<int32_t>;
  int Pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  Shape ShapeOf(int t) const { return b_.graph().tensors[t].shape; }
  int64_t Elements(int t) const { return b_.graph().tensors[t].num_elements(); }
  std::vector<float> Values(int64_t n) {
    std::vector<float> v(static_cast<size_t>(n));
    for (float& f : v) f = std::uniform_real_distribution<float>(-1.5f, 1.5f)(rng_);
    return v;
  }
  int Const(const Shape& shape) {
    int64_t n = 1;
    for (int32_t d : shape) n *= d;
    return b_.ConstF32(fmt::format("c{}", counter_++), shape, Values(n));
  }

  int Step(int t) {
    const Shape s = ShapeOf(t);
    const int rank = static_cast<int>(s.size());
    const int axis = Pick(0, rank - 1);
    const bool small = Elements(t) <= 400;
    switch (Pick(0, 11)) {
      case 0: {
        const tfl::BuiltinOperator ops[] = {tfl::BuiltinOperator_TANH, tfl::BuiltinOperator_ABS,
                                            tfl::BuiltinOperator_NEG, tfl::BuiltinOperator_LOGISTIC};
        return b_.Unary(ops[Pick(0, 3)], t);
      }
      case 1: {  // a constant broadcast on a random subset of axes, maybe of lower rank
        Shape c = s;
        for (int32_t& d : c)
          if (Pick(0, 1)) d = 1;
        const int drop = Pick(0, 2);
        c.erase(c.begin(), c.begin() + drop);
        return Pick(0, 1) ? b_.Mul(t, Const(c)) : b_.Add(Const(c), t);
      }
      case 2: {
        std::vector<int32_t> perm(rank);
        std::iota(perm.begin(), perm.end(), 0);
        std::shuffle(perm.begin(), perm.end(), rng_);
        return b_.Transpose(t, perm);
      }
      case 3: return b_.Softmax(t);
      case 4: return small ? b_.Concatenation({t, b_.Tanh(t)}, axis) : t;
      case 5: return s[axis] % 2 == 0 ? b_.Split(t, axis, 2)[Pick(0, 1)] : b_.Neg(t);
      case 6: {
        std::vector<int32_t> begin, size;
        for (int32_t d : s) {
          const int32_t n = Pick(1, d);
          begin.push_back(Pick(0, d - n));
          size.push_back(n);
        }
        return b_.Slice(t, begin, size);
      }
      case 7: {
        std::vector<int32_t> axes;
        for (int d = 0; d < rank; ++d)
          if (Pick(0, 2) == 0) axes.push_back(d);
        if (axes.empty()) axes.push_back(axis);
        return Pick(0, 1) ? b_.Sum(t, axes, true) : b_.ReduceMax(t, axes, true);
      }
      case 8: {                           // with a constant right operand, or with itself transposed
        if (rank > 5) return b_.Tanh(t);  // BATCH_MATMUL takes at most 5-D operands
        if (Pick(0, 1)) return b_.BatchMatMul(t, Const({s.back(), Pick(1, 3)}));
        return small ? b_.BatchMatMul(t, t, false, true) : t;
      }
      case 9: {
        const int32_t n = Pick(1, 3);
        std::vector<int32_t> idx;
        for (int i = 0; i < n; ++i) idx.push_back(Pick(0, s[axis] - 1));
        return b_.Gather(t, b_.ConstI32(fmt::format("i{}", counter_++), {n}, idx), axis);
      }
      case 10: {
        builder::Paddings pads(rank, {0, 0});
        pads[axis] = {Pick(0, 1), 1};
        return small ? b_.Pad(t, pads) : t;
      }
      default: {
        std::vector<int32_t> m(rank, 1);
        m[axis] = 2;
        return small ? b_.Tile(t, m) : t;
      }
    }
  }

  GraphBuilder& b_;
  std::mt19937 rng_;
  int counter_ = 0;
};

class RandomChains : public ::testing::TestWithParam<uint32_t> {};

TEST_P(RandomChains, LeaveRank5AndKeepTheirValues) {
  GraphBuilder b;
  RandomChain chains(b, GetParam());
  std::vector<npy::Array> inputs;
  for (int i = 0; i < 24; ++i) {
    const int64_t n = chains.Add(6, i);
    inputs.push_back(synth::HashUniform({1, n}, -2, 2, GetParam() + static_cast<uint32_t>(i)));
  }
  const ir::Model model = b.Finish();
  const testing::PassProof proof = testing::ExpectPassProven("rank5-to-rank4", model, inputs);
  EXPECT_LE(MaxRank(proof.rewritten), 4);
  for (const Skip& skip : proof.result.skipped) ADD_FAILURE() << skip.op << ": " << skip.why;
  testing::ExpectFindingGone(model, proof.rewritten, "rank-5");
}

INSTANTIATE_TEST_SUITE_P(Rank5ToRank4, RandomChains, ::testing::Values(20261203u, 7u, 4242u));

}  // namespace
}  // namespace gpuclean::rewrite
