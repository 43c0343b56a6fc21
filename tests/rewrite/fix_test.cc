// ctest-labels: litert webgpu slow
// Fix(): pass choice from lint, the per-pass proof, refusal of unproven
// rewrites, and the fixture models (every implemented pass applied to each
// must stay within bounds on our interpreter and on LiteRT.js).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <set>
#include <span>

#include "gpuclean/builder.h"
#include "gpuclean/error.h"
#include "gpuclean/format.h"
#include "gpuclean/lint.h"
#include "gpuclean/rewrite.h"
#include "gpuclean/synth.h"
#include "rewrite/graph_edit.h"
#include "support/conformance.h"
#include "support/test_support.h"
#include "support/tflite_names.h"

namespace gpuclean::rewrite {
namespace {

using builder::GraphBuilder;
using ::gpuclean::testing::tflite_names::F32;

ir::Model ReluModel() {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 8});
  b.Output(b.Mul(b.Relu(x), x));
  return b.Finish();
}

// A deliberately wrong pass that claims to be exact: RELU -> TANH.
class WrongPass final : public Pass {
 public:
  std::string_view id() const override { return "test-wrong"; }
  Exactness exactness() const override { return Exactness::kExact; }
  std::string_view contract() const override { return "none: a broken pass for tests"; }
  PassResult Apply(ir::Model& model, const PassOptions&) const override {
    PassResult result;
    GraphEdit edit(model, "test-wrong");
    for (size_t i = 0; i < edit.graph().ops.size(); ++i)
      if (edit.graph().ops[i].code == tfl::BuiltinOperator_RELU) {
        const int x = edit.graph().ops[i].inputs[0];
        edit.Replace(static_cast<int>(i), {edit.b().Tanh(x)});
        result.sites.push_back({static_cast<int>(i), "RELU", "tanh"});
      }
    edit.Commit();
    return result;
  }
};

TEST(Fix, RefusesAPassWhoseNumbersMoveAndNamesIt) {
  const WrongPass wrong;
  FixOptions options;
  options.passes = {"auto"};
  options.extra_passes = {&wrong};
  const FixResult result = Fix(ReluModel(), options);
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.failure.find("pass test-wrong is not proven"), std::string::npos) << result.failure;
  ASSERT_FALSE(result.passes.empty());
  EXPECT_FALSE(result.passes.back().proven);
  EXPECT_GT(result.passes.back().deltas.at(0).max_abs_diff, 0.01);
  EXPECT_THROW(WriteResult(result, testing::TempDir().file("x.tflite"), false), Error);
}

// A correct exact pass: RELU -> MAXIMUM(x, 0).
class ReluAsMaximumPass final : public Pass {
 public:
  std::string_view id() const override { return "test-relu-max"; }
  Exactness exactness() const override { return Exactness::kExact; }
  std::string_view contract() const override { return "relu(x) = max(x, 0)"; }
  PassResult Apply(ir::Model& model, const PassOptions&) const override {
    PassResult result;
    GraphEdit edit(model, "test-relu-max");
    for (size_t i = 0; i < edit.graph().ops.size(); ++i)
      if (edit.graph().ops[i].code == tfl::BuiltinOperator_RELU) {
        const int x = edit.graph().ops[i].inputs[0];
        edit.Replace(static_cast<int>(i), {edit.b().Maximum(x, edit.b().ConstF32("zero", {1}, {0.0f}))});
        result.sites.push_back({static_cast<int>(i), "RELU", "maximum"});
      }
    edit.Commit();
    return result;
  }
};

TEST(Fix, AChainProofStillNamesThePassThatBrokeTheNumbers) {
  const ReluAsMaximumPass right;
  const WrongPass wrong;
  FixOptions options;
  options.passes = {"auto"};
  options.extra_passes = {&wrong, &right};
  options.prove_as_chain = true;
  const FixResult result = Fix(ReluModel(), options);
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.failure.find("pass test-wrong is not proven"), std::string::npos) << result.failure;
  ASSERT_EQ(result.passes.size(), 1u);  // the one-by-one proofs stopped at it
  EXPECT_FALSE(result.passes.back().proven);
  EXPECT_GT(result.passes.back().deltas.at(0).max_abs_diff, 0.01);
}

TEST(Fix, AProvenChainKeepsItsOutputsAndSharesTheReference) {
  const ReluAsMaximumPass right;
  const ir::Model model = ReluModel();
  FixOptions options;
  options.passes = {"auto"};
  options.extra_passes = {&right};
  options.prove_as_chain = true;
  options.reference = std::make_shared<ReferenceOutputs>();
  const FixResult result = Fix(model, options);
  ASSERT_TRUE(result.ok) << result.failure;
  ASSERT_EQ(result.passes.size(), 1u);
  EXPECT_TRUE(result.passes[0].proven);
  ASSERT_EQ(result.outputs.size(), 2u);  // the fixed model's outputs on both proof sets
  ASSERT_EQ(options.reference->outputs.size(), 2u);
  EXPECT_EQ(result.outputs[1][0].data, options.reference->outputs[1][0].data);  // max(x, 0) is relu(x) exactly

  // A later fix on the same model reads the shared reference instead of
  // running the original: a reference moved by 1 fails its proof.
  for (auto& set : options.reference->outputs)
    for (float& v : std::span(set[0].as<float>(), static_cast<size_t>(set[0].num_elements()))) v += 1;
  const FixResult again = Fix(model, options);
  EXPECT_FALSE(again.proven);
  EXPECT_NE(again.failure.find("pass test-relu-max is not proven"), std::string::npos) << again.failure;
}

TEST(Fix, AChainComparedOnOneSetStillRunsEverySet) {
  // convert's onnxruntime proof covers every set: the chain is compared with
  // the original on the first only, and the original does not run on the
  // second; the fixed model's outputs cover both.
  const ReluAsMaximumPass right;
  const WrongPass wrong;
  FixOptions options;
  options.passes = {"auto"};
  options.extra_passes = {&right};
  options.prove_as_chain = true;
  options.chain_sets = 1;
  options.reference = std::make_shared<ReferenceOutputs>();
  const FixResult result = Fix(ReluModel(), options);
  ASSERT_TRUE(result.ok) << result.failure;
  ASSERT_EQ(result.outputs.size(), 2u);
  ASSERT_EQ(options.reference->outputs.size(), 2u);
  EXPECT_FALSE(options.reference->outputs[0].empty());
  EXPECT_TRUE(options.reference->outputs[1].empty());
  EXPECT_FALSE(result.outputs[1].empty());

  // A wrong chain still fails on the set it is compared on, and the
  // one-by-one proofs that follow run the original on every set.
  FixOptions failing = options;
  failing.extra_passes = {&wrong};
  failing.reference = std::make_shared<ReferenceOutputs>();
  const FixResult broken = Fix(ReluModel(), failing);
  EXPECT_FALSE(broken.ok);
  EXPECT_NE(broken.failure.find("pass test-wrong is not proven"), std::string::npos) << broken.failure;
  ASSERT_EQ(failing.reference->outputs.size(), 2u);
  EXPECT_FALSE(failing.reference->outputs[1].empty());
}

TEST(Fix, AppliedOnlyIsNeverProven) {
  const ReluAsMaximumPass right;
  FixOptions options;
  options.passes = {"auto"};
  options.extra_passes = {&right};
  options.prove = false;
  const FixResult result = Fix(ReluModel(), options);
  EXPECT_FALSE(result.proven);
  EXPECT_FALSE(result.ok);
  EXPECT_TRUE(result.outputs.empty());
  ASSERT_EQ(result.passes.size(), 1u);
  EXPECT_FALSE(result.passes[0].proven);
  EXPECT_EQ(result.passes[0].sites.size(), 1u);
  int maximums = 0;
  for (const ir::Op& op : result.model.main().ops) maximums += op.code == tfl::BuiltinOperator_MAXIMUM;
  EXPECT_EQ(maximums, 1);
}

TEST(Fix, NothingToDoIsOkAndLeavesTheGraph) {
  const ir::Model model = ReluModel();
  const FixResult result = Fix(model, {});
  EXPECT_TRUE(result.ok) << result.failure;
  EXPECT_EQ(result.changed_sites(), 0);
  EXPECT_EQ(result.model.main().ops.size(), model.main().ops.size());
}

TEST(Fix, UnknownOrManualPassIdsAreUsageErrors) {
  FixOptions options;
  options.passes = {"no-such-pass"};
  try {
    Fix(ReluModel(), options);
    FAIL() << "expected a usage error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(std::string(e.what()).find("implemented: densify-offline"), std::string::npos) << e.what();
  }
  options.passes = {"split-graph"};
  EXPECT_THROW(Fix(ReluModel(), options), Error);
}

TEST(Fix, ProofInputsCoverBothSignsForFloats) {
  const ir::Model model = ReluModel();
  const auto sets = ProofInputs(model.main(), 3, {});
  ASSERT_EQ(sets.size(), 2u);
  const float* narrow = sets[0][0].as<float>();
  const float* wide = sets[1][0].as<float>();
  float lo = 0, hi = 0;
  for (int i = 0; i < 8; ++i) {
    EXPECT_GE(narrow[i], 0.0f);
    EXPECT_LT(narrow[i], 1.0f);
    lo = std::min(lo, wide[i]), hi = std::max(hi, wide[i]);
  }
  EXPECT_LT(lo, 0.0f);
  EXPECT_GT(hi, 1.0f);
}

TEST(Fix, DeltasIgnoreWhereTheOriginalIsNan) {
  npy::Array a{tfl::TensorType_FLOAT32, {3}, std::vector<uint8_t>(12)};
  npy::Array b = a;
  a.as<float>()[0] = NAN, a.as<float>()[1] = 2.0f, a.as<float>()[2] = 1.0f;
  b.as<float>()[0] = 5.0f, b.as<float>()[1] = 2.5f, b.as<float>()[2] = INFINITY;
  const ir::Model model = ReluModel();
  const auto d = Deltas(model.main(), {a}, {b}, 1e-5);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_TRUE(std::isinf(d[0].max_abs_diff)) << "finite original, infinite rewrite must fail";
  b.as<float>()[2] = 1.0f;
  EXPECT_DOUBLE_EQ(Deltas(model.main(), {a}, {b}, 1e-5)[0].max_abs_diff, 0.5);
}

// Every implemented automatic pass on every fixture model: whatever matches
// must prove, and the result must agree with LiteRT.js running the original.
TEST(Fix, EveryPassOnEveryFixtureModelStaysWithinBounds) {
  std::vector<std::string> all;
  for (const Pass* p : Registry())
    if (!p->opt_in()) all.push_back(std::string(p->id()));
  for (const std::string& path : testing::FixtureModels()) {
    SCOPED_TRACE(path);
    const ir::Model model = format::ReadModel(path);
    FixOptions options;
    options.passes = all;
    const FixResult result = Fix(model, options);
    // Fixtures may keep errors no pass covers: the proofs are what is tested here.
    ASSERT_TRUE(result.proven) << result.failure;
    for (const OutputDelta& d : result.total) EXPECT_LE(d.max_abs_diff, d.allowed) << d.output;
    if (result.changed_sites() == 0) continue;
    std::cout << std::filesystem::path(path).filename().string() << ": " << result.changed_sites()
              << " site(s) rewritten\n";
    testing::TempDir dir;
    const std::string fixed = dir.file("fixed.tflite");
    WriteResult(result, fixed, false);
    const std::vector<npy::Array> inputs = testing::MakeInputs(path);
    const std::vector<npy::Array> theirs = testing::RunLiteRt(fixed, inputs);
    const std::vector<npy::Array> ours = testing::RunOurs(model, inputs);
    ASSERT_EQ(theirs.size(), ours.size());
    for (size_t i = 0; i < ours.size(); ++i) {
      const testing::Agreement a = testing::Compare(ours[i], theirs[i]);
      EXPECT_LE(a.max_abs_diff, 1e-4 * std::max(1.0, a.max_abs_ref)) << "output " << i;
    }
  }
}

TEST(Fix, SparseFaceDetectorBecomesFullyDelegatedByPrediction) {
  const ir::Model model = format::ReadModel(testing::FixtureModel("face_detection_full_range_sparse.tflite"));
  const FixResult result = Fix(model, {});
  ASSERT_TRUE(result.ok) << result.failure;
  ASSERT_EQ(result.passes.size(), 1u);
  EXPECT_EQ(result.passes[0].id, "densify-offline");
  EXPECT_EQ(result.passes[0].sites.size(), 46u);
  EXPECT_GT(result.before.count(lint::Severity::kError), 0);
  EXPECT_EQ(result.after.count(lint::Severity::kError), 0);
  const lint::SubgraphResidency& after = result.after.residency.at(0);
  EXPECT_EQ(after.gpu_nodes, after.nodes);
  EXPECT_EQ(after.partitions, 1);
  for (const OutputDelta& d : result.total) EXPECT_EQ(d.max_abs_diff, 0) << d.output;
}

TEST(Fix, HostInputsAreWrittenBesideTheModel) {
  FixResult result;
  result.proven = result.ok = true;
  result.model = ReluModel();
  result.host_inputs.push_back(
      {"host-fed-constants/pos_embed", npy::Array{tfl::TensorType_FLOAT32, {2}, std::vector<uint8_t>(8)}});
  testing::TempDir dir;
  const auto files = WriteResult(result, dir.file("m.tflite"), false);
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[1], dir.file("m.host-fed-constants_pos_embed.npy"));
  EXPECT_EQ(npy::Read(files[1]).shape, (std::vector<int64_t>{2}));
}

}  // namespace
// A rewrite can expose a finding the original did not have: the 5-D island
// merges to [2,8,3], where its [2,1,3] constant is one the WebGPU delegate
// misreads. Fix runs a second round for the new finding and ends clean.
TEST(Fix, ASecondRoundFixesWhatAnEarlierRewriteExposed) {
  GraphBuilder b;
  const int x = b.Input("x", F32, {1, 8, 6});
  const int five = b.Reshape(x, {2, 4, 1, 2, 3});
  const int y = b.Add(five, b.ConstF32("bias", {2, 1, 1, 1, 3}, {0.5f, -1.0f, 2.0f, 1.5f, -0.25f, 0.75f}));
  b.Output(b.Reshape(y, {1, 8, 6}));
  const ir::Model model = b.Finish();
  FixOptions options;
  options.target = "mldrift-webgpu@2.5.3";
  const FixResult r = Fix(model, options);
  ASSERT_TRUE(r.ok) << r.failure;
  std::vector<std::string> applied;
  for (const PassOutcome& p : r.passes)
    if (!p.sites.empty()) applied.push_back(p.id);
  EXPECT_EQ(applied, (std::vector<std::string>{"rank5-to-rank4", "const-operand-rank4"}));
  EXPECT_EQ(r.after.count(lint::Severity::kError), 0);
}

}  // namespace gpuclean::rewrite

namespace gpuclean::rewrite {
namespace {

// One file for both delegates: a -inf PADV2 before a max-pool (OpenCL
// splits on it, WebGPU takes it) and a BATCH_MATMUL whose second operand has
// 32832 rows (WebGPU returns zeros, OpenCL is not known to). Each target's
// rewrite runs in turn and the result lints clean for both.
TEST(FixForTargets, MakesOneModelCleanForEachTarget) {
  GraphBuilder b;
  const int x = b.Input("x", F32, {1, 4, 4, 3});
  const int y = b.Relu(x);
  b.Output(b.MaxPool2D(b.PadV2(y, {{0, 0}, {1, 1}, {1, 1}, {0, 0}}, -INFINITY), tfl::Padding_VALID, 2, 2, 3, 3));
  const int q = b.Input("q", F32, {342, 2, 96});
  const int k = b.Input("k", F32, {342, 96, 4});
  b.Output(b.BatchMatMul(b.Tanh(q), k));
  const ir::Model model = b.Finish();
  const std::vector<std::string> both = {"mldrift-webgpu@2.5.3", "mldrift-cl@2.1.6"};
  const std::string compat = testing::SourceDir() + "/data/compat/";
  for (const std::string& t : both)
    EXPECT_GT(lint::Lint(model, lint::LoadMatrix(compat, t)).count(lint::Severity::kError), 0) << t;
  const TargetsFixResult r = FixForTargets(model, {}, both);
  ASSERT_TRUE(r.proven);
  EXPECT_TRUE(r.ok);
  ASSERT_EQ(r.final.size(), 2u);
  for (const auto& [target, verdict] : r.final) {
    EXPECT_EQ(lint::Lint(r.model, lint::LoadMatrix(compat, target)).count(lint::Severity::kError), 0) << target;
    EXPECT_EQ(verdict.changed_sites(), 0) << target << ": nothing is left to change";
  }
  std::set<std::string> applied;
  for (const auto& [target, step] : r.steps)
    for (const PassOutcome& p : step.passes)
      if (!p.sites.empty()) applied.insert(target + " " + p.id);
  EXPECT_TRUE(applied.count("mldrift-webgpu@2.5.3 bmm-split-rows"));
  EXPECT_TRUE(applied.count("mldrift-cl@2.1.6 padv2-to-pad0"));
  const std::vector<npy::Array> inputs = {synth::HashUniform({1, 4, 4, 3}, -2, 2, 1),
                                          synth::HashUniform({342, 2, 96}, -2, 2, 2),
                                          synth::HashUniform({342, 96, 4}, -2, 2, 3)};
  const auto want = testing::RunOurs(model, inputs), got = testing::RunOurs(r.model, inputs);
  for (size_t o = 0; o < want.size(); ++o) EXPECT_EQ(want[o].data, got[o].data) << "output " << o;
  testing::ExpectMatchesLiteRt(r.model, inputs);
}

}  // namespace
}  // namespace gpuclean::rewrite
