// One micro-probe per rule: the rule fires on the bad graph and stays silent
// on the fixed (near-miss) graph.
#include "gpuclean/synth.h"
#include "lint_test_util.h"

namespace gpuclean::lint {
namespace {

using testing::CountRule;
using testing::LintOn;

// The micro-probes live in the library (src/synth/probes.cc) so that
// `gpuclean synth probes` writes the very graphs these tests lint.
std::vector<const synth::SynthGraph*> Probes() {
  std::vector<const synth::SynthGraph*> bad;
  for (const synth::SynthGraph* g : synth::Resolve({"probes"}))
    if (!g->fixed) bad.push_back(g);
  return bad;
}

class RuleProbe : public ::testing::TestWithParam<size_t> {};

TEST_P(RuleProbe, FiresOnTheBadGraphOnly) {
  const synth::SynthGraph& probe = *Probes()[GetParam()];
  Report bad = LintOn(probe.build(), probe.target);
  ASSERT_GE(CountRule(bad, probe.rule), 1) << probe.rule << "\n" << RenderText(bad, testing::Target(probe.target));
  const Finding& f = *testing::FirstOf(bad, probe.rule);
  EXPECT_FALSE(f.why.empty());
  EXPECT_FALSE(f.consequence.empty());
  EXPECT_FALSE(f.provenance.empty());
  EXPECT_FALSE(f.evidence.source.empty());
  if (f.node >= 0) EXPECT_FALSE(f.tensors.empty());
  EXPECT_FALSE(f.fix_pass.empty()) << probe.rule << " names no rewrite";
  Report good = LintOn(synth::Build(probe.counterpart), probe.target);
  EXPECT_EQ(CountRule(good, probe.rule), 0) << probe.rule << "\n" << RenderText(good, testing::Target(probe.target));
}

INSTANTIATE_TEST_SUITE_P(Lint, RuleProbe, ::testing::Range<size_t>(0, Probes().size()),
                         [](const ::testing::TestParamInfo<size_t>& info) {
                           std::string name = Probes()[info.param]->rule;
                           for (char& c : name)
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

TEST(RuleVersions, Relu0To1DependsOnTheRuntimeVersion) {
  EXPECT_EQ(LintOn(synth::Build("hard-sigmoid"), "mldrift-cl@2.1.3").node_status[0][0], Status::kDelegated);
  EXPECT_EQ(LintOn(synth::Build("hard-sigmoid"), "mldrift-cl@2.1.5").node_status[0][0], Status::kRejected);
  EXPECT_EQ(LintOn(synth::Build("hard-sigmoid"), "mldrift-cl@2.1.6").node_status[0][0], Status::kRejected);
}

TEST(RuleVersions, BroadcastAddAfterBatchMatMulIsFixedIn216) {
  for (const char* target : {"mldrift-cl@2.1.3", "mldrift-cl@2.1.5"})
    EXPECT_EQ(testing::FirstOf(LintOn(synth::Build("bmm-mask-add"), target), "add-broadcast-after-bmm")->status,
              Status::kIncorrect);
  EXPECT_EQ(CountRule(LintOn(synth::Build("bmm-mask-add"), "mldrift-cl@2.1.6"), "add-broadcast-after-bmm"), 0);
}

TEST(RuleVersions, TransposeConvIsAcceptedByTheClassicChecker) {
  Report r = LintOn(synth::Build("transpose-conv"), "tflite-gpu");
  EXPECT_EQ(r.count(Severity::kError), 0);
  EXPECT_EQ(r.residency[0].gpu_nodes, r.residency[0].nodes);
}

TEST(RuleVersions, CompileCeilingIsAWarningWithASplitHint) {
  Report r = LintOn(synth::Build("relu-chain-1001"));
  const Finding* f = testing::FirstOf(r, "compile-ceiling");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kWarning);
  EXPECT_EQ(f->fix_pass, "split-graph");
  EXPECT_EQ(f->node, -1);
}

// Op versions a newer converter writes, against each delegate's parser cap:
// the classic delegate's (tflite/delegates/gpu/common/model_builder.cc) are
// low, ML Drift's at 2.2.0 and LiteRT.js 2.5.3's WebGPU (measured) are not.
ir::Model OneOp(tfl::BuiltinOperator code, int version) {
  builder::GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 4, 4, 8});
  int y = -1;
  if (code == tfl::BuiltinOperator_FULLY_CONNECTED)
    y = b.FullyConnected(x, b.ConstF32("w", {4, 8}, std::vector<float>(32, 0.1f)), -1);
  else if (code == tfl::BuiltinOperator_TRANSPOSE)
    y = b.Transpose(x, {0, 2, 1, 3});
  else if (code == tfl::BuiltinOperator_MUL)
    y = b.Mul(x, x);
  else
    y = b.Add(x, x);
  b.Output(y);
  ir::Model m = b.Finish();
  m.main().ops.back().version = version;
  return m;
}

TEST(RuleVersions, ConverterOpVersionsPastTheClassicDelegatesCapsAreRejected) {
  const struct {
    tfl::BuiltinOperator code;
    int accepted, refused;
  } kCases[] = {{tfl::BuiltinOperator_FULLY_CONNECTED, 9, 12},
                {tfl::BuiltinOperator_ADD, 2, 4},
                {tfl::BuiltinOperator_MUL, 3, 5},
                {tfl::BuiltinOperator_TRANSPOSE, 4, 5}};
  for (const auto& c : kCases) {
    const std::string op = tfl::EnumNameBuiltinOperator(c.code);
    EXPECT_EQ(LintOn(OneOp(c.code, c.accepted), "tflite-gpu").node_status[0].back(), Status::kDelegated) << op;
    EXPECT_EQ(LintOn(OneOp(c.code, c.refused), "tflite-gpu").node_status[0].back(), Status::kRejected) << op;
    for (const char* target : {"mldrift-cl@2.2.0", "mldrift-webgpu@2.5.3"})
      EXPECT_EQ(LintOn(OneOp(c.code, c.refused), target).count(Severity::kError), 0) << op << " " << target;
  }
}

// An options table a converter left out reads as the schema's defaults: a
// float FULLY_CONNECTED without one has DEFAULT weights, not shuffled ones.
TEST(RuleVersions, AnOpWithoutItsOptionsTableHasTheDefaults) {
  ir::Model m = OneOp(tfl::BuiltinOperator_FULLY_CONNECTED, 9);
  m.main().ops.back().options.Reset();
  for (const char* target : {"mldrift-cl@2.2.0", "tflite-gpu", "mldrift-webgpu@2.5.3"})
    EXPECT_EQ(LintOn(m, target).count(Severity::kError), 0) << target << "\n"
                                                            << RenderText(LintOn(m, target), testing::Target(target));
}

}  // namespace
}  // namespace gpuclean::lint
