// ctest-labels: litert webgpu slow
// The RF-DETR-Seg-style recipe end to end (docs/pipeline.md): the exported
// two-stage detector and segmenter (tools/export_onnx_fixtures.py
// rfdetr_seg_small: encoder proposals -> TopK -> GatherElements -> decoder
// with a GridSample sampler -> classes, boxes, masks) converts for the
// WebGPU delegate into graph A + one host island + graph B, and the
// pipeline reproduces onnxruntime on the monolithic ONNX model with the
// deployment's task gates (box IoU >= 0.99, mask IoU >= 0.995, equal
// classes) on our interpreter and with both graphs fully delegated to
// LiteRT.js's real WebGPU delegate, in one Chromium page.
#include <filesystem>

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

TEST_F(RfDetrRecipe, ConvertsToGraphAHostIslandGraphB) {
  ASSERT_TRUE(fs::exists(onnx_)) << onnx_ << " missing: run tools/fetch_onnx_fixtures.sh";
  ASSERT_EQ(convert_.exit_code, 0) << convert_.out << convert_.err;
  EXPECT_NE(convert_.out.find("verdict: PASS"), std::string::npos) << convert_.out;
  const pipeline::Spec spec = pipeline::LoadSpec(Spec());
  // graph, host..., graph: the top-K, the index arithmetic of the two
  // converted GatherElements and their GATHER_NDs all in one host island.
  ASSERT_GE(spec.stages.size(), 3u);
  EXPECT_EQ(spec.stages.front().kind, pipeline::Stage::Kind::kGraph);
  EXPECT_EQ(spec.stages.back().kind, pipeline::Stage::Kind::kGraph);
  int graphs = 0, topk = 0, gathers = 0;
  for (size_t s = 0; s < spec.stages.size(); ++s) {
    const pipeline::Stage& st = spec.stages[s];
    graphs += st.kind == pipeline::Stage::Kind::kGraph;
    if (s > 0 && s + 1 < spec.stages.size()) EXPECT_EQ(st.kind, pipeline::Stage::Kind::kHost) << st.name;
    topk += st.host == "topk";
    gathers += st.host == "gather_nd";
  }
  EXPECT_EQ(graphs, 2);
  EXPECT_EQ(topk, 1);
  EXPECT_EQ(gathers, 2);
  EXPECT_EQ(spec.outputs, (std::vector<std::string>{"logits", "boxes", "masks"}));
  // Each graph is GPU-clean for the target on its own.
  for (const char* graph : {"rf.graph1.tflite", "rf.graph2.tflite"}) {
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
  const auto r = testing::RunGpuclean(Prove("--runtime litert-webgpu --precision fp16"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
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

// RF-DETR-Seg Nano, architecture-faithful (tools/export_onnx_fixtures.py
// rfdetr_seg_nano: DINOv2-S/12 with LayerScale at 312x312, two-stage
// top-100 selection, deformable cross-attention through 6-D sampling
// tensors and grid_sample, masks [1,100,78,78]) for Android's OpenCL
// delegate and the web's WebGPU one at once: every graph of the pipeline
// has no tensor above rank 4 and no lint error for either target, both run
// fully delegated on the real WebGPU delegate in fp16, and the detections
// match onnxruntime's monolith query for query after pairing by box (a
// proposal a top-K near-tie swaps in or out is reported, not failed).
TEST(RfDetrSegNano, PipelineIsCleanForBothTargetsAndMatchesOnWebGpu) {
  const std::string onnx = (OnnxCache() / "rfdetr_seg_nano.onnx").string();
  ASSERT_TRUE(fs::exists(onnx)) << onnx << " missing: run tools/fetch_onnx_fixtures.sh";
  testing::TempDir dir;
  const auto convert = testing::RunGpuclean("convert " + onnx + " --target mldrift-webgpu@2.5.3,mldrift-cl@2.1.6 " +
                                            "--host-ops auto -q -o " + dir.file("rf"));
  ASSERT_EQ(convert.exit_code, 0) << convert.out << convert.err;
  const pipeline::Spec spec = pipeline::LoadSpec(dir.file("rf.pipeline.json"));
  int graphs = 0;
  for (const pipeline::Stage& st : spec.stages) graphs += st.kind == pipeline::Stage::Kind::kGraph;
  EXPECT_EQ(graphs, 2);
  for (const char* graph : {"rf.graph1.tflite", "rf.graph2.tflite"}) {
    for (const char* target : {"mldrift-webgpu@2.5.3", "mldrift-cl@2.1.6"}) {
      const auto lint = testing::RunGpuclean("lint " + dir.file(graph) + " --target " + target + " --format json");
      EXPECT_EQ(lint.exit_code, 0) << graph << " " << target << ": " << lint.out << lint.err;
    }
    const auto inspect = testing::RunGpuclean("inspect " + dir.file(graph));
    EXPECT_NE(inspect.out.find("max rank 4"), std::string::npos) << inspect.out;
  }
  const auto r = testing::RunGpuclean("pipeline prove " + dir.file("rf.pipeline.json") + " --against " + onnx +
                                      " --input input=" + (OnnxCache() / "rfdetr_seg_nano.input.npy").string() +
                                      " --gate 'boxes:box_iou>=0.9' --gate 'masks:mask_iou>=0.9' --gate logits:argmax"
                                      " --boxes cxcywh --mask-threshold 0 -q --runtime litert-webgpu --precision fp16");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  size_t delegated = 0;
  for (size_t at = r.out.find("fully delegated"); at != std::string::npos; at = r.out.find("fully delegated", at + 1))
    ++delegated;
  EXPECT_EQ(delegated, 2u) << r.out;
  EXPECT_NE(r.out.find("verdict: PASS"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace gpuclean
