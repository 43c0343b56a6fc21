// ctest-labels: litert webgpu slow
// Lint of the seven MediaPipe fixture models: runs on every target, stable,
// and sensible (the sparse model's DENSIFY, the custom op accepted).
#include <filesystem>
#include <map>

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

// Measured with `gpuclean probe MODEL --runtime litert-webgpu --residency-only`
// (LiteRT.js 2.5.3, SwiftShader) on 2026-11-29; the probe takes seconds per
// model, so the numbers are recorded here and in the matrix evidence.
TEST(Fixtures, PredictionEqualsMeasuredWebGpuResidency) {
  const std::map<std::string, std::pair<int, int>> measured = {
      {"face_detection_full_range.tflite", {354, 354}},    {"face_detection_full_range_sparse.tflite", {159, 388}},
      {"face_detection_short_range.tflite", {164, 164}},   {"hand_landmark_full.tflite", {165, 165}},
      {"hand_landmark_lite.tflite", {167, 167}},           {"selfie_segmentation.tflite", {246, 246}},
      {"selfie_segmentation_landscape.tflite", {246, 246}}};
  for (const auto& path : gpuclean::testing::FixtureModels()) {
    Report r = testing::LintOn(format::ReadModel(path), "mldrift-webgpu@2.5.3");
    ASSERT_TRUE(measured.count(Name(path))) << Name(path);
    EXPECT_EQ(r.residency[0].gpu_nodes, measured.at(Name(path)).first) << Name(path);
    EXPECT_EQ(r.residency[0].nodes, measured.at(Name(path)).second) << Name(path);
    EXPECT_EQ(r.residency[0].partitions, 1);
  }
}

TEST(Fixtures, SparseFaceDetectorHasDensifyFindings) {
  Report r =
      testing::LintOn(format::ReadModel(gpuclean::testing::FixtureModel("face_detection_full_range_sparse.tflite")));
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
