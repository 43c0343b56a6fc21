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

// The 5-D tensor is also read elsewhere: rewriting would leave it in place.
TEST(Rank5ToRank4, LeavesAFannedOutChainAlone) {
  GraphBuilder b;
  const int x = b.Input("x", F32, {1, 2, 3, 4});
  const int five = b.Reshape(x, {1, 2, 3, 2, 2});
  b.Output(b.Reshape(b.Relu(five), {1, 2, 3, 4}));
  b.Output(b.Reshape(b.Tanh(five), {1, 2, 3, 4}));
  ir::Model model = b.Finish();
  EXPECT_TRUE(FindPass("rank5-to-rank4")->Apply(model, {}).sites.empty());
}

}  // namespace
}  // namespace gpuclean::rewrite
