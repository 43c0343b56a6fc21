// The pass base: which ops a pass visits, that it sees a stable copy while
// the edit appends ops, the skip record, the shared scalar, the per-Apply
// shared tensors and the host-fed scalar input.
#include <gtest/gtest.h>

#include "gpuclean/builder.h"
#include "rewrite/pattern_pass.h"
#include "support/tflite_names.h"

namespace gpuclean::rewrite {
namespace {

using ::gpuclean::testing::tflite_names::F32;

// RELU(x) -> MAXIMUM(x, 0) + 0 * x, which appends two ops that are RELUs'
// kin (MAXIMUM is not looked at; the ADD of the replacement is). Tanh is
// skipped with a reason.
class ReluAsMaximum final : public PatternPass<int> {
 public:
  ReluAsMaximum()
      : PatternPass({"test-relu-as-maximum", Exactness::kExact, "test pass"},
                    {tfl::BuiltinOperator_RELU, tfl::BuiltinOperator_TANH, tfl::BuiltinOperator_ADD}) {}
  mutable int visits = 0;

 private:
  std::optional<int> Match(const OpSite& site) const override {
    ++visits;
    if (site.op.code == tfl::BuiltinOperator_TANH) site.Skip({site.tensor(site.op.outputs[0]).name}, "not a RELU");
    if (site.op.code != tfl::BuiltinOperator_RELU) return std::nullopt;
    return site.op.inputs[0];
  }
  std::string Rewrite(OpSite& site, const int& x) const override {
    const int zero = site.edit.SharedScalarF32("zero", 0.0f);
    const int y = site.b().Add(site.b().Maximum(x, zero), site.b().Mul(x, site.edit.SharedScalarF32("zero", 0.0f)));
    site.edit.Replace(site.node, {y});
    // The op the site holds is still the RELU it was given, whatever the builder appended.
    return std::string(site.op.name()) + " -> MAXIMUM";
  }
};

TEST(PatternPass, VisitsTheDeclaredOpsTheGraphHadOnceOnAStableCopy) {
  builder::GraphBuilder b;
  const int x = b.Input("x", F32, {1, 8});
  const int r1 = b.Relu(x);
  const int t = b.Tanh(r1);
  b.Output(b.Mul(b.Relu(t), r1));
  ir::Model model = b.Finish();

  const ReluAsMaximum pass;
  const PassResult result = pass.Apply(model, {});
  EXPECT_EQ(pass.visits, 3) << "two RELUs and the TANH; the ADDs the pass appended are not visited";
  ASSERT_EQ(result.sites.size(), 2u);
  EXPECT_EQ(result.sites[0].node, 0);
  EXPECT_EQ(result.sites[0].op, "RELU");
  EXPECT_EQ(result.sites[0].what, "RELU -> MAXIMUM");
  EXPECT_EQ(result.sites[1].node, 2);
  ASSERT_EQ(result.skipped.size(), 1u);
  EXPECT_EQ(result.skipped[0].node, 1);
  EXPECT_EQ(result.skipped[0].why, "not a RELU");

  int relus = 0, zeros = 0;
  for (const ir::Op& op : model.main().ops) relus += op.code == tfl::BuiltinOperator_RELU;
  for (const ir::Tensor& tensor : model.main().tensors) zeros += tensor.name == "test-relu-as-maximum/zero";
  EXPECT_EQ(relus, 0);
  EXPECT_EQ(zeros, 1) << "one shared scalar for every site";
}

// TANH(x) -> NEG(x) * one with `one` a host-fed input: one NEG per distinct
// x however many TANHs read it, one host input for every site.
class TanhAsSharedNeg final : public OpPass {
 public:
  TanhAsSharedNeg()
      : OpPass({"test-tanh-as-shared-neg", Exactness::kExact, "test pass"}, {tfl::BuiltinOperator_TANH}) {}
  mutable int negs = 0;

 private:
  std::optional<std::string> Visit(OpSite& site) const override {
    const int x = site.op.inputs[0];
    const int neg = site.Shared("neg " + std::to_string(x), [&] {
      ++negs;
      return site.b().Neg(x);
    });
    const int one = site.SharedHostScalar("one", 1.0f);
    site.edit.Replace(site.node, {site.b().Mul(neg, one)});
    return "NEG(x) * one";
  }
};

TEST(PatternPass, SharedTensorsAndTheHostScalarAreMadeOncePerApply) {
  auto model_of_three_tanhs = [] {
    builder::GraphBuilder b;
    const int x = b.Input("x", F32, {1, 8});
    const int y = b.Input("y", F32, {1, 8});
    b.Output(b.Add(b.Add(b.Tanh(x), b.Tanh(x)), b.Tanh(y)));
    return b.Finish();
  };
  const TanhAsSharedNeg pass;
  for (int apply = 1; apply <= 2; ++apply) {
    // A second Apply (on another model) starts with nothing shared.
    ir::Model model = model_of_three_tanhs();
    const PassResult result = pass.Apply(model, {});
    ASSERT_EQ(result.sites.size(), 3u);
    EXPECT_EQ(pass.negs, 2 * apply) << "one NEG for x, one for y";
    ASSERT_EQ(result.host_inputs.size(), 1u);
    EXPECT_EQ(result.host_inputs[0].name, "test-tanh-as-shared-neg/one");
    EXPECT_EQ(result.host_inputs[0].value.shape, std::vector<int64_t>({1}));
    const ir::Subgraph& g = model.main();
    ASSERT_EQ(g.inputs.size(), 3u);
    EXPECT_EQ(g.tensors[g.inputs[2]].name, "test-tanh-as-shared-neg/one");
    int negs = 0;
    for (const ir::Op& op : g.ops) negs += op.code == tfl::BuiltinOperator_NEG;
    EXPECT_EQ(negs, 2);
  }
}

}  // namespace
}  // namespace gpuclean::rewrite
