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

}  // namespace
}  // namespace gpuclean::lint
