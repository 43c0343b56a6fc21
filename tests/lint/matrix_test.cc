#include <filesystem>
#include <fstream>
#include <map>

#include "gpuclean/error.h"
#include "gpuclean/precision.h"
#include "lint/residency.h"
#include "lint/rules/rule.h"
#include "lint_test_util.h"

namespace gpuclean::lint {
namespace {

using testing::CompatDir;
namespace fs = std::filesystem;

TEST(Matrix, EveryDataFileValidates) {
  int files = 0;
  for (const auto& item : fs::directory_iterator(CompatDir())) {
    if (item.path().extension() != ".json") continue;
    ++files;
    auto errors = ValidateMatrixFile(item.path().string());
    EXPECT_TRUE(errors.empty()) << errors.front();
  }
  EXPECT_GE(files, 7);
}

TEST(Matrix, RequiredTargetsLoadWithTheirChains) {
  const std::vector<std::string> required = {
      "mldrift-cl@2.1.3",   "mldrift-cl@2.1.5",     "mldrift-cl@2.1.6", "mldrift-cl@2.2.0",
      "mldrift-ir@f674577", "mldrift-webgpu@2.5.3", "tflite-gpu",       "xnnpack"};
  EXPECT_EQ(ListTargets(CompatDir()), required);
  for (const auto& target : required) {
    Matrix m = LoadMatrix(CompatDir(), target);
    EXPECT_EQ(m.target, target);
    EXPECT_FALSE(m.entries.empty()) << target;
    for (const Entry& e : m.entries)
      if (e.provenance == "measured")
        EXPECT_TRUE(e.evidence.source.starts_with("probe: gpuclean probe")) << target << " " << e.id;
  }
  EXPECT_EQ(LoadMatrix(CompatDir(), "mldrift-cl@2.1.3").chain,
            (std::vector<std::string>{"mldrift-cl@2.1.3", "mldrift-cl@2.1.5", "mldrift-cl@2.1.6", "_mldrift-common"}));
}

TEST(Matrix, InheritedFactsFromAnotherRuntimeAreInferences) {
  const Matrix& webgpu = testing::Target("mldrift-webgpu@2.5.3");
  for (const Entry& e : webgpu.entries)
    if (e.id != "rank-5" && e.provenance != "measured") EXPECT_EQ(e.provenance, "inferred") << e.id;
  const Matrix& cl = testing::Target("mldrift-cl@2.1.6");
  auto it = std::find_if(cl.entries.begin(), cl.entries.end(), [](const Entry& e) { return e.id == "transpose-conv"; });
  ASSERT_NE(it, cl.entries.end());
  EXPECT_EQ(it->provenance, "reference-doc");
}

TEST(Matrix, UnknownTargetIsAUsageErrorListingTargets) {
  try {
    LoadMatrix(CompatDir(), "mldrift-cl@9.9");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(std::string(e.what()).find("mldrift-cl@2.1.6"), std::string::npos);
  }
}

TEST(Matrix, ValidatorNamesBadFields) {
  gpuclean::testing::TempDir dir;
  std::ofstream(dir.file("bad.json")) << R"({"format":"gpuclean-compat/1","target":"bad","entries":[
    {"id":"a","op":"ADD","status":"maybe","provenance":"measured","evidence":{"date":"d","runtime":"r","source":"doc"},
     "hints":["no-such-pass"],"when":{"colour":"red"}}],
    "rules":[{"id":"no-such-rule","status":"incorrect","provenance":"inferred","evidence":{"date":"d","runtime":"r","source":"s"}}]})";
  auto errors = ValidateMatrixFile(dir.file("bad.json"));
  std::string all;
  for (const auto& e : errors) all += e + "\n";
  for (const char* needle : {"'status'", "measured entry", "no-such-pass", "colour", "no-such-rule"})
    EXPECT_NE(all.find(needle), std::string::npos) << needle << "\n" << all;
}

// inputs_above counts present inputs: ADD_N's two-input cap.
TEST(Matrix, InputsAboveCountsInputsAndIsValidated) {
  gpuclean::testing::TempDir dir;
  std::ofstream(dir.file("bad.json")) << R"({"format":"gpuclean-compat/1","target":"bad","entries":[
    {"id":"a","op":"ADD_N","status":"rejected","provenance":"source","evidence":{"date":"d","runtime":"r","source":"s"},
     "when":{"inputs_above":"two"}}]})";
  std::string all;
  for (const auto& e : ValidateMatrixFile(dir.file("bad.json"))) all += e + "\n";
  EXPECT_NE(all.find("inputs_above"), std::string::npos) << all;

  for (int inputs : {2, 3}) {
    builder::GraphBuilder b;
    std::vector<int> xs;
    for (int i = 0; i < inputs; ++i) xs.push_back(b.Input("x" + std::to_string(i), tfl::TensorType_FLOAT32, {1, 4}));
    b.Output(b.Op(tfl::BuiltinOperator_ADD_N, xs)[0]);
    const Report r = testing::LintOn(b.Finish(), "mldrift-webgpu@2.5.3");
    EXPECT_EQ(testing::CountRule(r, "add-n-inputs"), inputs > 2 ? 1 : 0) << inputs << " inputs";
  }
}

TEST(Matrix, EveryTargetNamesItsNumericModel) {
  const std::map<std::string, Precision> expected = {
      {"mldrift-cl@2.1.3", Precision::kFp16Compute},   {"mldrift-cl@2.1.5", Precision::kFp16Compute},
      {"mldrift-cl@2.1.6", Precision::kFp16Compute},   {"mldrift-cl@2.2.0", Precision::kFp16Compute},
      {"mldrift-ir@f674577", Precision::kFp16Compute}, {"mldrift-webgpu@2.5.3", Precision::kFp16Fused},
      {"tflite-gpu", Precision::kFp16Compute},         {"xnnpack", Precision::kFp32}};
  for (const auto& target : ListTargets(CompatDir())) {
    ASSERT_TRUE(expected.count(target)) << target;
    const Matrix& m = testing::Target(target);
    EXPECT_EQ(NumericModel(m), expected.at(target)) << target;
    EXPECT_FALSE(m.numerics.evidence.source.empty()) << target;
    EXPECT_EQ(ResolvePrecision("fp16", target, CompatDir()), expected.at(target)) << target;
  }
  EXPECT_EQ(testing::Target("mldrift-webgpu@2.5.3").numerics.provenance, "measured");
  // Explicit mode names mean themselves whatever the target.
  EXPECT_EQ(ResolvePrecision("fp16-storage", "mldrift-webgpu@2.5.3", CompatDir()), Precision::kFp16Storage);
  EXPECT_EQ(ResolvePrecision("fp32", "mldrift-cl@2.1.6", CompatDir()), Precision::kFp32);
  EXPECT_THROW(ResolvePrecision("fp8", "mldrift-cl@2.1.6", CompatDir()), Error);
}

TEST(Matrix, ATargetWithoutANumericModelDoesNotLoad) {
  gpuclean::testing::TempDir dir;
  std::ofstream(dir.file("bare.json")) << R"({"format":"gpuclean-compat/1","target":"bare","entries":[]})";
  std::ofstream(dir.file("odd.json"))
      << R"({"format":"gpuclean-compat/1","target":"odd","numerics":{"model":"fp8","provenance":"measured",)"
      << R"("evidence":{"date":"d","runtime":"r","source":"a document"}}})";
  EXPECT_TRUE(ValidateMatrixFile(dir.file("bare.json")).empty());
  try {
    LoadMatrix(dir.path().string(), "bare");
    FAIL() << "a target without numerics loaded";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadInput);
    EXPECT_NE(std::string(e.what()).find("numeric model"), std::string::npos) << e.what();
  }
  std::string all;
  for (const auto& e : ValidateMatrixFile(dir.file("odd.json"))) all += e + "\n";
  EXPECT_NE(all.find("'model' must be one of"), std::string::npos) << all;
  EXPECT_NE(all.find("measured model must name the probe"), std::string::npos) << all;
}

TEST(Matrix, EveryHintIsAPassAndEveryRuleIsRegistered) {
  for (const auto& target : ListTargets(CompatDir())) {
    const Matrix& m = testing::Target(target);
    for (const auto* list : {&m.entries, &m.rules})
      for (const Entry& e : *list)
        for (const auto& hint : e.hints) EXPECT_NE(FindPass(hint), nullptr) << target << " " << e.id << " " << hint;
    for (const Entry& r : m.rules) EXPECT_NE(FindStructuralRule(r.id), nullptr) << r.id;
  }
}

TEST(Matrix, MostSpecificEntryWins) {
  // TOPK_V2 has a plain entry and one constrained by the channel count.
  builder::GraphBuilder b;
  int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 6});
  b.Output(b.TopKV2(x, 2).first);
  Report r = testing::LintOn(b.Finish(), "mldrift-cl@2.1.6");
  EXPECT_EQ(testing::CountRule(r, "topk-v2-channels"), 1);
  EXPECT_EQ(testing::CountRule(r, "topk-v2"), 0);
  EXPECT_EQ(r.node_status[0][0], Status::kFallback);
}

TEST(Matrix, NoEntryIsReportedUnknownNeverGuessed) {
  builder::GraphBuilder b;
  int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 4, 4, 8});
  b.Output(b.Ceil(x));
  Report r = testing::LintOn(b.Finish(), "mldrift-cl@2.1.6");  // 2.1.6 has no CEIL entry
  ASSERT_EQ(testing::CountRule(r, "no-entry"), 1);
  EXPECT_EQ(testing::FirstOf(r, "no-entry")->status, Status::kUnknown);
  EXPECT_EQ(r.residency[0].unknown_nodes, 1);
  EXPECT_EQ(r.residency[0].gpu_nodes, 0) << "a node nothing vouches for is not counted on the GPU";
  EXPECT_EQ(r.residency[0].if_accepted_gpu_nodes, 1);
  EXPECT_NE(PredictedLine(r.residency[0]).find("predicted: 0 of 1 nodes on GPU"), std::string::npos)
      << PredictedLine(r.residency[0]);
}

}  // namespace
}  // namespace gpuclean::lint
