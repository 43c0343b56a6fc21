// ctest-labels: litert
// A model recipe (gpuclean recipe, convert --recipe): the files an app team
// takes as they are. The README's tables are filled from runs made here,
// and the generated run.mjs - plain Node and LiteRT.js, binding every graph
// by its signature's names - reproduces onnxruntime's outputs in refs/.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "gpuclean/npy.h"
#include "onnx/op_test_util.h"

namespace gpuclean {
namespace {

namespace fs = std::filesystem;
using testing::OnnxTestModel;
using testing::RandomValues;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// run.mjs's outputs against refs/set<k>/out.*.npy, onnxruntime's.
void ExpectRunnerReproducesRefs(const fs::path& recipe, const std::vector<std::string>& outputs) {
  const auto run =
      testing::RunCommand("node " + (recipe / "run.mjs").string() + " --set 1 --out " + (recipe / "out").string() +
                          " --node-modules " + testing::SourceDir() + "/node_modules");
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  for (const std::string& name : outputs) {
    const npy::Array ref = npy::Read((recipe / "refs/set1" / ("out." + name + ".npy")).string());
    const npy::Array got = npy::Read((recipe / "out" / ("out." + name + ".npy")).string());
    ASSERT_EQ(got.shape, ref.shape) << name;
    ASSERT_EQ(got.dtype, ref.dtype) << name;
    const float* a = ref.as<float>();
    const float* b = got.as<float>();
    double worst = 0;
    for (int64_t i = 0; i < ref.num_elements(); ++i)
      worst = std::max(worst, std::abs(double(a[i]) - b[i]) / std::max(1.0, std::abs(double(a[i]))));
    EXPECT_LE(worst, 1e-4) << name;
  }
}

TEST(Recipe, ConvertWritesAPipelineRecipeWhoseRunnerReproducesOnnxRuntime) {
  testing::TempDir dir;
  const std::string onnx = testing::TwoStageSelectionModel(40, 6, 7).Write(dir.file("two_stage.onnx"));
  const auto r = testing::RunGpuclean("convert " + onnx + " --target mldrift-webgpu@2.5.3 --host-ops auto -q -o " +
                                      dir.file("ts") + " --recipe " + dir.file("recipe"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const fs::path recipe = dir.file("recipe");
  for (const char* f : {"README.md", "pipeline.json", "run.mjs", "ts.graph1.tflite", "ts.graph2.tflite",
                        "refs/set1/in.features.npy", "refs/set1/out.head.npy", "refs/set1/out.top_scores.npy"})
    EXPECT_TRUE(fs::exists(recipe / f)) << f;
  EXPECT_FALSE(fs::exists(dir.file("recipe.partial")));
  const std::string readme = ReadAll((recipe / "README.md").string());
  // Tables from measurements: the residency lint predicts for the GPU graph,
  // the CPU graph named as such, fidelity verdicts with their numbers.
  EXPECT_NE(readme.find("| `graph1` | gpu |"), std::string::npos) << readme;
  EXPECT_NE(readme.find("| `graph2` | cpu |"), std::string::npos) << readme;
  EXPECT_NE(readme.find("predicted: "), std::string::npos) << readme;
  EXPECT_NE(readme.find("fp16-fused GPU stages"), std::string::npos) << readme;
  EXPECT_NE(readme.find("| pass | pass argmax"), std::string::npos) << readme;
  EXPECT_NE(readme.find("createInputBuffer(\"features\", \"serving_default\")"), std::string::npos) << readme;
  EXPECT_NE(readme.find("## Device records"), std::string::npos) << readme;
  EXPECT_NE(readme.find("gpuclean convert " + onnx), std::string::npos) << readme;
  ExpectRunnerReproducesRefs(recipe, {"head", "top_scores"});

  // Bad input: one line, exit 2, nothing left behind.
  for (const std::string& bad :
       {"recipe " + dir.file("nothere.tflite") + " -o " + dir.file("r1"),
        "recipe " + dir.file("ts.pipeline.json") + " -o " + dir.file("r2") + " --input nope=" + dir.file("x.npy")}) {
    const auto refused = testing::RunGpuclean(bad);
    EXPECT_EQ(refused.exit_code, 2) << bad << "\n" << refused.err;
    EXPECT_EQ(testing::CountLines(refused.err), 1) << refused.err;
  }
  EXPECT_FALSE(fs::exists(dir.file("r1")));
  EXPECT_FALSE(fs::exists(dir.file("r2")));
  EXPECT_FALSE(fs::exists(dir.file("r2.partial")));
  // A recipe is written to a new folder, never over one.
  const auto again = testing::RunGpuclean("recipe " + dir.file("ts.pipeline.json") + " -o " + dir.file("recipe"));
  EXPECT_EQ(again.exit_code, 2) << again.out << again.err;
  EXPECT_NE(again.err.find("exists and is not empty"), std::string::npos) << again.err;
}

// A single graph with a host-fed constant (SAM 2's position embedding is
// one): the constant is listed with its file, and run.mjs feeds it by name.
TEST(Recipe, ASingleGraphWithAHostFedConstantBindsItByName) {
  testing::TempDir dir;
  OnnxTestModel m;
  m.Input("x", {1, 256, 1024});
  // A large constant (1 MiB) added to the activations: the targets feed such
  // constants from the host (lint rule large-constant).
  m.InitF32("pos_embed", {1, 256, 1024}, RandomValues(256 * 1024, 9));
  m.Node("Add", {"x", "pos_embed"}, {"y"});
  m.Node("Tanh", {"y"}, {"out"});
  m.Output("out");
  const std::string onnx = m.Write(dir.file("single.onnx"));
  const auto r = testing::RunGpuclean("convert " + onnx + " --target mldrift-webgpu@2.5.3 -q -o " +
                                      dir.file("single.tflite") + " --recipe " + dir.file("recipe"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const fs::path recipe = dir.file("recipe");
  const std::string readme = ReadAll((recipe / "README.md").string());
  EXPECT_NE(readme.find("| `x` | float32 | [1,256,1024] | the app"), std::string::npos) << readme;
  EXPECT_NE(readme.find("constant: `single."), std::string::npos) << readme;
  ExpectRunnerReproducesRefs(recipe, {"out"});
}

// SAM 2.1 Hiera-T's image encoder (architecture-faithful, 256x256), its
// windowed position embedding fed from the host: the recipe lists the
// constant by its signature name and file, and run.mjs reproduces
// onnxruntime's three FPN levels on the fixture's input.
TEST(Recipe, Sam2EncoderRecipeFeedsItsPositionEmbeddingByName) {
  const std::string onnx = (testing::OnnxCache() / "sam2_hiera_t_256.onnx").string();
  ASSERT_TRUE(fs::exists(onnx)) << onnx << " missing: run tools/fetch_onnx_fixtures.sh";
  testing::TempDir dir;
  const auto r =
      testing::RunGpuclean("convert " + onnx + " --target mldrift-webgpu@2.5.3 -q -o " + dir.file("sam2.tflite") +
                           " --input input=" + (testing::OnnxCache() / "sam2_hiera_t_256.input.npy").string() +
                           " --recipe " + dir.file("recipe"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const fs::path recipe = dir.file("recipe");
  const std::string readme = ReadAll((recipe / "README.md").string());
  EXPECT_NE(readme.find("| `host-fed-constants/"), std::string::npos) << readme;
  EXPECT_NE(readme.find("| constant: `sam2.host-fed-constants_"), std::string::npos) << readme;
  EXPECT_NE(readme.find("the app (realistic input)"), std::string::npos) << readme;
  EXPECT_NE(readme.find("nodes on GPU, 1 partition; 0 lint error(s)"), std::string::npos) << readme;
  ExpectRunnerReproducesRefs(recipe, {"fpn0", "fpn1", "fpn2"});
}

}  // namespace
}  // namespace gpuclean
