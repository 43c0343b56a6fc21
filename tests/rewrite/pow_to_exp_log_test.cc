// ctest-labels: litert
#include <cmath>

#include "gpuclean/builder.h"
#include "rewrite/pass_proof.h"
#include "support/arrays.h"
#include "support/tflite_names.h"

namespace gpuclean::rewrite {
namespace {

using builder::GraphBuilder;
using ::gpuclean::testing::tflite_names::F32;

int Scalar(GraphBuilder& b, const std::string& name, float v) { return b.ConstF32(name, {}, {v}); }

// Gamma encoding, a power-law compressor and a generalised mean, as traced
// from torch.pow with float exponents; x is non-negative (a ReLU output or
// a magnitude) as in those models.
ir::Model FractionalPowers() {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 12});
  int mag = b.Abs(x);
  b.Output(b.Pow(mag, Scalar(b, "inv_gamma", 1.0f / 2.2f)));
  b.Output(b.Pow(mag, Scalar(b, "p", 1.5f)));
  int positive = b.Add(mag, Scalar(b, "eps", 1e-3f));
  b.Output(b.Pow(positive, Scalar(b, "neg", -0.75f)));
  return b.Finish();
}

const npy::Array kXPowToExpLog =
    testing::F32({1, 12}, {0.0f, 1e-6f, -1e-3f, 0.05f, -0.5f, 0.999f, 1.0f, -2.0f, 3.7f, -10.0f, 55.0f, -300.0f});

TEST(PowToExpLog, FractionalExponentsBecomeExpLog) {
  const ir::Model model = FractionalPowers();
  const testing::PassProof proof = testing::ExpectPassProven("pow-to-exp-log", model, {kXPowToExpLog}, 3);
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_POW), 0);
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_EXP), 3);
  testing::ExpectFindingGone(model, proof.rewritten, "pow");
}

TEST(PowToExpLog, SmallIntegerAndHalfExponentsAreExactForAnySign) {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 12});
  b.Output(b.Pow(x, Scalar(b, "two", 2.0f)));
  b.Output(b.Pow(x, Scalar(b, "three", 3.0f)));
  b.Output(b.Pow(x, Scalar(b, "four", 4.0f)));
  b.Output(b.Pow(x, Scalar(b, "minus_one", -1.0f)));
  b.Output(b.Pow(x, Scalar(b, "one", 1.0f)));
  int positive = b.Add(b.Abs(x), Scalar(b, "eps", 1e-5f));
  b.Output(b.Pow(positive, Scalar(b, "half", 0.5f)));
  b.Output(b.Pow(positive, Scalar(b, "minus_half", -0.5f)));
  const ir::Model model = b.Finish();
  const testing::PassProof proof = testing::ExpectPassProven("pow-to-exp-log", model, {kXPowToExpLog}, 7);
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_POW), 0);
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_EXP), 0);  // no exp/log for these
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_SQRT), 1);
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_RSQRT), 1);
  // The integer powers are bit-exact, so they hold to the exact tolerance too.
  const std::vector<npy::Array> ref = testing::RunOurs(model, {kXPowToExpLog}),
                                got = testing::RunOurs(proof.rewritten, {kXPowToExpLog});
  for (size_t k = 0; k < 4; ++k) testing::ExpectWithinBound({ref[k]}, {got[k]}, 1e-6, "integer power");
  testing::ExpectFindingGone(model, proof.rewritten, "pow");
}

TEST(PowToExpLog, ConstantBaseBecomesExp) {
  // Decibels to amplitude: 10^(x / 20).
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 12});
  b.Output(b.Pow(Scalar(b, "ten", 10.0f), b.Mul(x, Scalar(b, "twentieth", 0.05f))));
  const ir::Model model = b.Finish();
  const testing::PassProof proof = testing::ExpectPassProven("pow-to-exp-log", model, {kXPowToExpLog});
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_POW), 0);
  testing::ExpectFindingGone(model, proof.rewritten, "pow");
}

TEST(PowToExpLog, LeavesOddPowersRuntimeExponentsAndTinyExponentsAlone) {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 4});
  int y = b.Input("y", F32, {1, 4});
  b.Output(b.Pow(x, Scalar(b, "five", 5.0f)));  // sign of x matters, no exp/log
  b.Output(b.Pow(x, y));                        // exponent known only at runtime
  b.Output(b.Pow(x, Scalar(b, "tiny", 0.1f)));  // the clamp error eps^0.1 breaks the bound
  b.Output(b.Pow(x, Scalar(b, "zero", 0.0f)));
  ir::Model model = b.Finish();
  const PassResult result = FindPass("pow-to-exp-log")->Apply(model, {});
  EXPECT_TRUE(result.sites.empty());
  EXPECT_EQ(testing::CountOps(model, tfl::BuiltinOperator_POW), 4);
}

}  // namespace
}  // namespace gpuclean::rewrite
