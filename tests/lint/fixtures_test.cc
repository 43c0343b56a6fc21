// Lint of the seven MediaPipe fixture models: runs on every target, stable,
// and sensible (the sparse model's DENSIFY, the custom op accepted).
#include <filesystem>

#include "gpuclean/format.h"
#include "lint_test_util.h"

namespace gpuclean::lint {
namespace {

std::string Name(const std::string& path) { return std::filesystem::path(path).filename().string(); }

TEST(Fixtures, EveryModelLintsOnEveryTarget) {
  for (const auto& path : gpuclean::testing::FixtureModels()) {
    ir::Model model = format::ReadModel(path);
    for (const auto& target : ListTargets(testing::CompatDir())) {
      Report r = testing::LintOn(model, target);
      ASSERT_EQ(r.residency.size(), model.subgraphs.size());
      EXPECT_EQ(r.residency[0].nodes, static_cast<int>(model.main().ops.size()));
      EXPECT_EQ(r.residency[0].unknown_nodes, 0) << Name(path) << " on " << target << "\n"
                                                 << RenderText(r, testing::Target(target));
    }
  }
}

TEST(Fixtures, DenseModelsAreFullyResidentOnTheDefaultTarget) {
  for (const auto& path : gpuclean::testing::FixtureModels()) {
    if (Name(path) == "face_detection_full_range_sparse.tflite") continue;
    Report r = testing::LintOn(format::ReadModel(path));
    EXPECT_TRUE(r.findings.empty()) << RenderText(r, testing::Target(kDefaultTarget));
    EXPECT_EQ(r.residency[0].gpu_nodes, r.residency[0].nodes) << Name(path);
    EXPECT_EQ(r.residency[0].partitions, 1);
  }
}

TEST(Fixtures, SparseFaceDetectorHasDensifyFindings) {
  Report r = testing::LintOn(format::ReadModel(gpuclean::testing::FixtureModel("face_detection_full_range_sparse.tflite")));
  EXPECT_EQ(testing::CountRule(r, "densify"), 46);
  EXPECT_EQ(testing::CountRule(r, "dequantize-runtime"), 46);
  EXPECT_EQ(r.residency[0].gpu_nodes, 159);
  EXPECT_EQ(r.residency[0].nodes, 388);
  EXPECT_EQ(testing::FirstOf(r, "densify")->fix_pass, "densify-offline");
}

TEST(Fixtures, MediaPipeCustomOpIsAccepted) {
  ir::Model m = format::ReadModel(gpuclean::testing::FixtureModel("selfie_segmentation.tflite"));
  bool has_custom = false;
  for (const ir::Op& op : m.main().ops) has_custom = has_custom || op.code == tfl::BuiltinOperator_CUSTOM;
  ASSERT_TRUE(has_custom);
  Report r = testing::LintOn(m);
  EXPECT_TRUE(r.findings.empty());
}

TEST(Fixtures, ResultsAreStable) {
  ir::Model m = format::ReadModel(gpuclean::testing::FixtureModel("face_detection_full_range_sparse.tflite"));
  const Matrix& matrix = testing::Target(kDefaultTarget);
  EXPECT_EQ(ToJson(Lint(m, matrix), matrix).dump(), ToJson(Lint(m, matrix), matrix).dump());
}

}  // namespace
}  // namespace gpuclean::lint
