// ctest-labels: litert webgpu slow
// The RF-DETR-Seg-style recipe end to end (docs/pipeline.md): the exported
// two-stage detector and segmenter (tools/export_onnx_fixtures.py
// rfdetr_seg_small: encoder proposals -> TopK -> GatherElements -> decoder
// with a GridSample sampler -> classes, boxes, masks) converts for the
// WebGPU delegate into GPU graph A + one CPU graph + GPU graph B, and the
// pipeline reproduces onnxruntime on the monolithic ONNX model with the
// deployment's task gates (box IoU >= 0.99, mask IoU >= 0.995, equal
// classes) on our interpreter and as an app runs it: both GPU graphs fully
// delegated to LiteRT.js's real WebGPU delegate and the CPU graph on its
// wasm CPU path, in one Chromium page.
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

#include <gtest/gtest.h>

#include "gpuclean/pipeline.h"
#include "support/test_support.h"

namespace gpuclean {
namespace {

namespace fs = std::filesystem;

using testing::OnnxCache;

constexpr const char* kGates =
    " --gate 'boxes:box_iou>=0.99' --gate 'masks:mask_iou>=0.995' --gate logits:argmax --boxes cxcywh"
    " --mask-threshold 0";

class RfDetrRecipe : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    onnx_ = (OnnxCache() / "rfdetr_seg_small.onnx").string();
    input_ = (OnnxCache() / "rfdetr_seg_small.input.npy").string();
    convert_ = testing::RunGpuclean("convert " + onnx_ + " --target mldrift-webgpu@2.5.3 --host-ops auto -o " +
                                    dir_->file("rf"));
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static std::string Spec() { return dir_->file("rf.pipeline.json"); }
  static std::string Prove(const std::string& extra) {
    return "pipeline prove " + Spec() + " --against " + onnx_ + " --input input=" + input_ + kGates + " -q " + extra;
  }

  static testing::TempDir* dir_;
  static std::string onnx_, input_;
  static testing::CommandResult convert_;
};
testing::TempDir* RfDetrRecipe::dir_ = nullptr;
std::string RfDetrRecipe::onnx_, RfDetrRecipe::input_;
testing::CommandResult RfDetrRecipe::convert_;

TEST_F(RfDetrRecipe, ConvertsToGraphACpuGraphGraphB) {
  ASSERT_TRUE(fs::exists(onnx_)) << onnx_ << " missing: run tools/fetch_onnx_fixtures.sh";
  ASSERT_EQ(convert_.exit_code, 0) << convert_.out << convert_.err;
  EXPECT_EQ(convert_.out.find("verdict: FAIL"), std::string::npos) << convert_.out;
  const pipeline::Spec spec = pipeline::LoadSpec(Spec());
  // GPU graph, CPU graph, GPU graph: the top-K, the index arithmetic of the
  // two converted GatherElements and their GATHER_NDs in one CPU graph.
  std::vector<std::string> placements;
  for (const pipeline::Stage& st : spec.stages) {
    EXPECT_EQ(st.kind, pipeline::Stage::Kind::kGraph) << st.name;
    placements.push_back(st.placement);
  }
  EXPECT_EQ(placements, (std::vector<std::string>{"gpu", "cpu", "gpu"}));
  std::map<std::string, int> island_ops;
  for (const ir::Op& op : spec.models[1]->main().ops) ++island_ops[op.name()];
  EXPECT_EQ(island_ops["TOPK_V2"], 1);
  EXPECT_EQ(island_ops["GATHER_ND"], 2);
  EXPECT_EQ(spec.outputs, (std::vector<std::string>{"logits", "boxes", "masks"}));
  // Each GPU graph is GPU-clean for the target on its own.
  for (const char* graph : {"rf.graph1.tflite", "rf.graph3.tflite"}) {
    const auto lint = testing::RunGpuclean("lint " + dir_->file(graph) + " --target mldrift-webgpu@2.5.3");
    EXPECT_EQ(lint.exit_code, 0) << lint.out << lint.err;
    EXPECT_NE(lint.out.find("0 error(s)"), std::string::npos) << lint.out;
  }
}

TEST_F(RfDetrRecipe, PassesTheDeploymentGatesOnOurInterpreter) {
  ASSERT_EQ(convert_.exit_code, 0) << convert_.out << convert_.err;
  const auto r = testing::RunGpuclean(Prove(""));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("ok   box_iou>=0.99"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ok   mask_iou>=0.995"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ok   argmax: argmax equal in 16/16 rows"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("detections paired by box (boxes)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("verdict: PASS"), std::string::npos) << r.out;
}

TEST_F(RfDetrRecipe, PassesTheDeploymentGatesFullyDelegatedOnWebGpuInOnePage) {
  ASSERT_EQ(convert_.exit_code, 0) << convert_.out << convert_.err;
  const auto r = testing::RunGpuclean(Prove("--runtime litert --precision fp16"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("stage graph2           litert-wasm (page)"), std::string::npos) << r.out;
  size_t graphs = 0;
  for (size_t at = r.out.find("litert-webgpu "); at != std::string::npos; at = r.out.find("litert-webgpu ", at + 1)) {
    const std::string line = r.out.substr(at, r.out.find('\n', at) - at);
    EXPECT_NE(line.find("fully delegated"), std::string::npos) << line;
    ++graphs;
  }
  EXPECT_EQ(graphs, 2u) << r.out;
  EXPECT_NE(r.out.find("WebGPU graphs ran in 1 Chromium page(s)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ok   box_iou>=0.99"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ok   mask_iou>=0.995"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("verdict: PASS"), std::string::npos) << r.out;
}

// The recipe of the pipeline: its README judges the detections in fp32 and
// in WebGPU's arithmetic, and run.mjs - LiteRT.js alone, every graph bound
// by name - reproduces onnxruntime's outputs in refs/.
TEST_F(RfDetrRecipe, TheRecipeRunnerReproducesOnnxRuntime) {
  ASSERT_EQ(convert_.exit_code, 0) << convert_.out << convert_.err;
  const std::string recipe = dir_->file("recipe");
  const auto r = testing::RunGpuclean("recipe " + Spec() + " -o " + recipe + " --against " + onnx_ +
                                      " --input input=" + input_ + " --target mldrift-webgpu@2.5.3 -q");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto run = testing::RunCommand("node " + recipe + "/run.mjs --set 1 --out " + recipe + "/out --node-modules " +
                                       testing::SourceDir() + "/node_modules");
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  for (const char* output : {"logits", "boxes", "masks"}) {
    const auto compare = testing::RunGpuclean("compare " + recipe + "/refs/set1/out." + output + ".npy " + recipe +
                                              "/out/out." + output + ".npy --gate 'maxabs<=1e-4'");
    EXPECT_EQ(compare.exit_code, 0) << output << ": " << compare.out << compare.err;
  }
  std::ifstream in(recipe + "/README.md");
  const std::string readme((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(readme.find("| `logits`, `boxes`, `masks` | pass | detections>0.5"), std::string::npos) << readme;
  EXPECT_NE(readme.find("| `graph2` | cpu | CPU path |"), std::string::npos) << readme;
}

// RF-DETR-Seg Nano, architecture-faithful (tools/export_onnx_fixtures.py
// rfdetr_seg_nano: DINOv2-S/12 with LayerScale at 312x312, two-stage
// top-100 selection, deformable cross-attention through 6-D sampling
// tensors and grid_sample, masks [1,100,78,78]), converted for the web's
// WebGPU delegate on a photograph-sized input: convert proves the pipeline
// in fp32 and in WebGPU's fp16 arithmetic (every reference detection above
// 0.5 found again), every GPU graph has no tensor above rank 4 and no lint
// error for WebGPU and Android's OpenCL, and as an app runs it - GPU graphs
// fully delegated on the real WebGPU delegate in fp16, the CPU graph on
// wasm, one page - every reference detection is found again.
TEST(RfDetrSegNano, PipelineIsCleanAndKeepsEveryDetectionOnWebGpu) {
  const std::string onnx = (OnnxCache() / "rfdetr_seg_nano.onnx").string();
  const std::string input = (OnnxCache() / "rfdetr_seg_nano.input.npy").string();
  ASSERT_TRUE(fs::exists(onnx)) << onnx << " missing: run tools/fetch_onnx_fixtures.sh";
  testing::TempDir dir;
  const auto convert = testing::RunGpuclean("convert " + onnx + " --target mldrift-webgpu@2.5.3 --host-ops auto -q " +
                                            "--input input=" + input + " -o " + dir.file("rf"));
  ASSERT_EQ(convert.exit_code, 0) << convert.out << convert.err;
  EXPECT_NE(convert.out.find("in mldrift-webgpu@2.5.3's arithmetic (fp16-fused GPU stages"), std::string::npos)
      << convert.out;
  const pipeline::Spec spec = pipeline::LoadSpec(dir.file("rf.pipeline.json"));
  int gpu = 0, cpu = 0;
  for (const pipeline::Stage& st : spec.stages) {
    ASSERT_EQ(st.kind, pipeline::Stage::Kind::kGraph) << st.name;
    (st.placement == "gpu" ? gpu : cpu)++;
    if (st.placement != "gpu") continue;
    for (const char* target : {"mldrift-webgpu@2.5.3", "mldrift-cl@2.2.0"}) {
      const auto lint = testing::RunGpuclean("lint " + dir.file(st.graph) + " --target " + target + " --format json");
      EXPECT_EQ(lint.exit_code, 0) << st.graph << " " << target << ": " << lint.out << lint.err;
    }
    const auto inspect = testing::RunGpuclean("inspect " + dir.file(st.graph));
    EXPECT_NE(inspect.out.find("max rank 4"), std::string::npos) << inspect.out;
  }
  EXPECT_EQ(gpu, 2);
  EXPECT_EQ(cpu, 1);
  const auto r = testing::RunGpuclean("pipeline prove " + dir.file("rf.pipeline.json") + " --against " + onnx +
                                      " --input input=" + input + " -q --runtime litert --precision fp16");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  size_t delegated = 0;
  for (size_t at = r.out.find("fully delegated"); at != std::string::npos; at = r.out.find("fully delegated", at + 1))
    ++delegated;
  EXPECT_EQ(delegated, 2u) << r.out;
  EXPECT_NE(r.out.find("detections pass: 100/100 reference detection(s) above 0.5 found again"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("verdict: PASS"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace gpuclean
