// ctest-labels: litert
#include "gpuclean/builder.h"
#include "rewrite/pass_proof.h"
#include "support/arrays.h"
#include "support/tflite_names.h"

namespace gpuclean::rewrite {
namespace {

using builder::GraphBuilder;
using ::gpuclean::testing::tflite_names::F32;
constexpr double kTanhBound = 5e-4;  // measured worst case 4.73e-4 at x = -2.70

// x from -6 to 6 through the worst points of both forms (-2.70, -2.27).
npy::Array Sweep() {
  std::vector<float> v;
  for (int i = 0; i < 64; ++i) v.push_back(-6.0f + 12.0f * static_cast<float>(i) / 63.0f);
  v[10] = -2.6989f, v[11] = -2.2704f;
  return testing::F32({1, 4, 4, 4}, v);
}

ir::Model BuiltinGelu(bool approximate) {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 4, 4, 4});
  b.Output(b.Gelu(x, approximate));
  return b.Finish();
}

// Both runtimes: the rewritten graph against `reference` within `bound`.
void ExpectCloseTo(const ir::Model& reference, const ir::Model& rewritten, double bound) {
  const std::vector<npy::Array> in = {Sweep()};
  testing::ExpectWithinBound(testing::RunOurs(reference, in), testing::RunOurs(rewritten, in), bound, "interpreter");
  testing::TempDir dir;
  format::WriteModel(reference, dir.file("ref.tflite"));
  format::WriteModel(rewritten, dir.file("new.tflite"));
  testing::ExpectWithinBound(testing::RunLiteRt(dir.file("ref.tflite"), in),
                             testing::RunLiteRt(dir.file("new.tflite"), in), bound, "LiteRT.js");
}

TEST(GeluTanh, ExactBuiltinGeluBecomesTanhForm) {
  const ir::Model model = BuiltinGelu(false);
  const testing::PassProof proof = testing::ExpectPassProven("gelu-tanh", model, {Sweep()});
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_GELU), 0);
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_TANH), 1);
  ExpectCloseTo(model, proof.rewritten, kTanhBound);  // tighter than the declared bound
}

TEST(GeluTanh, SigmoidOptionGivesTheCheaperForm) {
  const ir::Model model = BuiltinGelu(false);
  PassOptions options;
  options.gelu_sigmoid = true;
  const testing::PassProof proof = testing::ExpectPassProven("gelu-tanh", model, {Sweep()}, 1, options);
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_LOGISTIC), 1);
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_TANH), 0);
  EXPECT_EQ(proof.rewritten.main().ops.size(), 3u);
}

// x * 0.5 * (1 + erf(x / sqrt 2)) around FlexErf, in the operand orders
// converters emit; `order` picks one.
ir::Model ErfGelu(int order) {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 4, 4, 4});
  int u =
      order == 3 ? b.Div(x, b.ConstF32("sqrt2", {}, {1.4142135f})) : b.Mul(b.ConstF32("rsqrt2", {}, {0.70710677f}), x);
  int e = b.Custom("FlexErf", {u}, {}, {{F32, {1, 4, 4, 4}}})[0];
  int p = b.Add(b.ConstF32("one", {}, {1.0f}), e);
  int half = b.ConstF32("half", {}, {0.5f});
  int y = order == 0 ? b.Mul(b.Mul(x, half), p) : order == 1 ? b.Mul(b.Mul(x, p), half) : b.Mul(x, b.Mul(p, half));
  b.Output(b.Relu(y));  // something downstream, as in an MLP
  return b.Finish();
}

TEST(GeluTanh, FlexErfDecompositionsBecomeTanhForm) {
  // Neither runtime runs FlexErf, so the proof is against the same function
  // written as the builtin exact GELU.
  GraphBuilder rb;
  rb.Output(rb.Relu(rb.Gelu(rb.Input("x", F32, {1, 4, 4, 4}), false)));
  const ir::Model reference = rb.Finish();
  for (int order = 0; order < 4; ++order) {
    SCOPED_TRACE(order);
    const ir::Model model = ErfGelu(order);
    ir::Model rewritten = model;
    const PassResult result = FindPass("gelu-tanh")->Apply(rewritten, {});
    ASSERT_EQ(result.sites.size(), 1u);
    rewritten.Validate();
    EXPECT_EQ(testing::CountOps(rewritten, tfl::BuiltinOperator_CUSTOM), 0);
    EXPECT_EQ(testing::CountOps(rewritten, tfl::BuiltinOperator_DIV), 0);
    ExpectCloseTo(reference, rewritten, kTanhBound);
    testing::ExpectFindingGone(model, rewritten, "flex-erf");
  }
}

TEST(GeluTanh, LeavesTanhGeluAndOtherErfUsesAlone) {
  ir::Model model = BuiltinGelu(true);
  EXPECT_TRUE(FindPass("gelu-tanh")->Apply(model, {}).sites.empty());
  EXPECT_EQ(testing::CountOps(model, tfl::BuiltinOperator_GELU), 1);

  // erf(x / 2): not a GELU.
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 4});
  int e = b.Custom("FlexErf", {b.Mul(x, b.ConstF32("half", {}, {0.5f}))}, {}, {{F32, {1, 4}}})[0];
  b.Output(b.Mul(b.Mul(x, b.ConstF32("h", {}, {0.5f})), b.Add(e, b.ConstF32("one", {}, {1.0f}))));
  ir::Model erf = b.Finish();
  const size_t ops = erf.main().ops.size();
  EXPECT_TRUE(FindPass("gelu-tanh")->Apply(erf, {}).sites.empty());
  EXPECT_EQ(erf.main().ops.size(), ops);
}

}  // namespace
}  // namespace gpuclean::rewrite
