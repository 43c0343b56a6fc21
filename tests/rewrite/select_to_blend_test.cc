// ctest-labels: litert
#include <cmath>

#include "gpuclean/builder.h"
#include "rewrite/graph_edit.h"
#include "rewrite/pass_proof.h"
#include "support/arrays.h"
#include "support/tflite_names.h"

namespace gpuclean::rewrite {
namespace {

using builder::GraphBuilder;
using ::gpuclean::testing::tflite_names::F32;

const npy::Array kXSelectToBlend = testing::F32({1, 2, 2, 2}, {-3.0f, -0.5f, 0.0f, 0.25f, 2.0f, -7.5f, 1e4f, -1e-3f});

TEST(SelectToBlend, PreluAndEluFormsOfRuntimeOperandsAreExact) {
  // where(x > 0, x, alpha * x) and where(x > 0, x, exp(x) - 1) as converters
  // lower PReLU and ELU, once per SELECT version.
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 2, 2, 2});
  int positive = b.Greater(x, b.ConstF32("zero", {}, {0.0f}));
  b.Output(b.SelectV2(positive, x, b.Mul(x, b.ConstF32("alpha", {1, 1, 1, 2}, {0.25f, 0.1f}))));
  b.Output(b.Select(positive, x, b.Sub(b.Exp(x), b.ConstF32("one", {}, {1.0f}))));
  const ir::Model model = b.Finish();
  const testing::PassProof proof = testing::ExpectPassProven("select-to-blend", model, {kXSelectToBlend}, 2);
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_SELECT), 0);
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_SELECT_V2), 0);
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_CAST), 1);  // the mask is shared
  testing::ExpectFindingGone(model, proof.rewritten, "select");
  testing::ExpectFindingGone(model, proof.rewritten, "select-v2");
  EXPECT_EQ(testing::CountFindings(proof.rewritten, "cast"), 0);
}

// Attention scores masked with a fill, then softmax: masked_fill(mask, fill)
// lowers to SELECT_V2(mask, fill, scores).
ir::Model MaskedSoftmax(float fill) {
  GraphBuilder b;
  int scores = b.Input("scores", F32, {1, 2, 4, 4});
  int keep = b.Input("keep", F32, {1, 1, 4, 4});
  int masked = b.LessEqual(keep, b.ConstF32("half", {}, {0.5f}));
  b.Output(b.Softmax(b.SelectV2(masked, b.ConstF32("fill", {}, {fill}), scores)));
  return b.Finish();
}

std::vector<npy::Array> MaskedSoftmaxInputs() {
  std::vector<float> scores(32), keep(16);
  for (size_t i = 0; i < scores.size(); ++i) scores[i] = std::sin(static_cast<float>(i)) * 6.0f;
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c) keep[r * 4 + c] = c <= r ? 1.0f : 0.0f;  // causal
  return {testing::F32({1, 2, 4, 4}, scores), testing::F32({1, 1, 4, 4}, keep)};
}

TEST(SelectToBlend, MaskFillsBecomeFp16FiniteBeforeSoftmax) {
  for (float fill : {-1e9f, -INFINITY}) {
    SCOPED_TRACE(fill);
    const ir::Model model = MaskedSoftmax(fill);
    const testing::PassProof proof = testing::ExpectPassProven("select-to-blend", model, MaskedSoftmaxInputs());
    EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_SELECT_V2), 0);
    for (const ir::Tensor& t : proof.rewritten.main().tensors)
      if (t.is_const() && t.dtype == F32)
        for (float v : ConstFloats(proof.rewritten.main(), &t - proof.rewritten.main().tensors.data()))
          EXPECT_LE(std::fabs(v), 65504.0f) << t.name;
    testing::ExpectFindingGone(model, proof.rewritten, "select-v2");
  }
}

TEST(SelectToBlend, ConstantConditionsAndRowSelectsAreStoredMasks) {
  GraphBuilder b;
  int x = b.Input("x", F32, {2, 3});
  int y = b.Input("y", F32, {2, 3});
  b.Output(b.SelectV2(b.ConstBool("even", {3}, {true, false, true}), x, y));
  b.Output(b.Select(b.ConstBool("rows", {2}, {false, true}), x, y));  // v1: picks whole rows
  const ir::Model model = b.Finish();
  const npy::Array xv = testing::F32({2, 3}, {1, -2, 3, -4, 5, -6});
  const npy::Array yv = testing::F32({2, 3}, {-10, 20, -30, 40, -50, 60});
  const testing::PassProof proof = testing::ExpectPassProven("select-to-blend", model, {xv, yv}, 2);
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_CAST), 0);
  EXPECT_EQ(testing::CountFindings(proof.rewritten, "all-const-inputs"), 0);
  testing::ExpectFindingGone(model, proof.rewritten, "select");
}

TEST(SelectToBlend, LeavesHugeFillsOutsideSoftmaxAndIntegerSelectsAlone) {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 4});
  int n = b.Input("n", tfl::TensorType_INT32, {1, 4});
  int cond = b.Greater(x, b.ConstF32("zero", {}, {0.0f}));
  // The -1e9 would reach REDUCE_MAX, where -30000 is a different answer.
  b.Output(b.ReduceMax(b.SelectV2(cond, x, b.ConstF32("fill", {}, {-1e9f})), {1}, false));
  b.Output(b.SelectV2(cond, n, b.ConstI32("zeros", {1, 4}, {0, 0, 0, 0})));
  ir::Model model = b.Finish();
  const size_t ops = model.main().ops.size();
  const PassResult result = FindPass("select-to-blend")->Apply(model, {});
  EXPECT_TRUE(result.sites.empty());
  EXPECT_EQ(model.main().ops.size(), ops);
}

}  // namespace
}  // namespace gpuclean::rewrite
