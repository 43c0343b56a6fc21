// ctest-labels: litert webgpu
// convert --host-ops auto: an ONNX two-stage query selection (scores ->
// TopK -> Gather of the chosen queries -> head) becomes GPU graphs with the
// selection in a CPU graph between them (or host steps, --islands steps),
// proven against onnxruntime on the ONNX model in fp32 and in the target's
// arithmetic; on LiteRT.js the GPU graphs run on the WebGPU delegate and
// the CPU graphs on wasm, with no gpuclean code between stages.
#include <filesystem>

#include <gtest/gtest.h>

#include "gpuclean/pipeline.h"

#include "onnx/detector_model.h"
#include "onnx/op_test_util.h"

namespace gpuclean {
namespace {

using testing::OnnxTestModel;
using testing::RandomValues;

OnnxTestModel TwoStageModel() { return testing::TwoStageSelectionModel(50, 10, 3); }

// The RF-DETR sampler as PyTorch exports it: GridSample -> scores -> TopK
// -> the indices unsqueezed and expanded over the channels (Expand becomes
// BROADCAST_TO, which no host step computes) -> GatherElements -> a head.
OnnxTestModel SamplerModel() {
  OnnxTestModel m;
  m.Input("image", {1, 8, 16, 16});
  m.Input("offsets", {1, 20, 1, 2});
  m.Node("Tanh", {"offsets"}, {"grid"});
  m.Node("GridSample", {"image", "grid"}, {"sampled"}).Int("align_corners", 0);
  m.InitI64("rows", {3}, {1, 8, 20});
  m.Node("Reshape", {"sampled", "rows"}, {"cols"});
  m.Node("Transpose", {"cols"}, {"feats"}).Ints("perm", {0, 2, 1});
  m.Node("ReduceMax", {"feats"}, {"scores"}).Ints("axes", {2}).Int("keepdims", 0);
  m.InitI64("k", {1}, {5});
  m.Node("TopK", {"scores", "k"}, {"top_scores", "top_index"});
  m.InitI64("axis2", {1}, {2});
  m.Node("Unsqueeze", {"top_index", "axis2"}, {"index3"});
  m.InitI64("wide", {3}, {1, 5, 8});
  m.Node("Expand", {"index3", "wide"}, {"index_wide"});
  m.Node("GatherElements", {"feats", "index_wide"}, {"picked"}).Int("axis", 1);
  m.InitF32("bias", {8}, RandomValues(8, 4));
  m.Node("Add", {"picked", "bias"}, {"head"});
  m.Output("head");
  m.Output("top_scores");
  return m;
}

TEST(ConvertHostOps, TopKAndGatherMoveToACpuGraphAndThePipelineIsProven) {
  const OnnxTestModel m = TwoStageModel();
  testing::TempDir dir;
  const std::string onnx = m.Write(dir.file("two_stage.onnx"));
  const auto r = testing::RunGpuclean("convert " + onnx + " --target mldrift-webgpu@2.5.3 --host-ops auto -q -o " +
                                      dir.file("ts"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("cpu   ts.graph2.tflite"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("in 1 CPU graph(s)"), std::string::npos) << r.out;
  // Proven twice: fp32, then the GPU graphs in WebGPU's arithmetic.
  EXPECT_NE(r.out.find("in mldrift-webgpu@2.5.3's arithmetic (fp16-fused GPU stages"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("verdict: FAIL"), std::string::npos) << r.out;
  ASSERT_TRUE(std::filesystem::exists(dir.file("ts.pipeline.json")));
  const pipeline::Spec spec = pipeline::LoadSpec(dir.file("ts.pipeline.json"));
  std::vector<std::string> placements;
  for (const pipeline::Stage& s : spec.stages) {
    EXPECT_EQ(s.kind, pipeline::Stage::Kind::kGraph) << s.name;
    placements.push_back(s.placement);
  }
  EXPECT_EQ(placements, (std::vector<std::string>{"gpu", "cpu", "gpu"}));
  EXPECT_FALSE(std::filesystem::exists(dir.file("ts.prove")));
  // The pipeline proves again from the command that users run.
  const auto again = testing::RunGpuclean("pipeline prove " + dir.file("ts.pipeline.json") + " --against " + onnx);
  EXPECT_EQ(again.exit_code, 0) << again.out << again.err;

  // Host steps stay available for an app that runs no CPU graph.
  const auto steps = testing::RunGpuclean(
      "convert " + onnx + " --target mldrift-webgpu@2.5.3 --host-ops auto --islands steps -q -o " + dir.file("st"));
  ASSERT_EQ(steps.exit_code, 0) << steps.out << steps.err;
  EXPECT_NE(steps.out.find("host  topk {\"k\":10}"), std::string::npos) << steps.out;

  const auto no_prefix = testing::RunGpuclean("convert " + onnx + " --host-ops auto -q");
  EXPECT_EQ(no_prefix.exit_code, 2);
  EXPECT_NE(no_prefix.err.find("--host-ops auto needs -o PREFIX"), std::string::npos) << no_prefix.err;
}

// What host steps could not cut (BROADCAST_TO of the expanded indices) goes
// to the CPU graph, for both targets at once; every GPU graph is clean for
// both, and the chain runs on LiteRT.js: GPU graphs fully delegated on
// WebGPU in fp16, the CPU graph on wasm.
TEST(ConvertHostOps, TheGridSampleTopKGatherElementsSamplerConvertsForBothTargets) {
  testing::TempDir dir;
  const std::string onnx = SamplerModel().Write(dir.file("sampler.onnx"));
  for (const char* target : {"mldrift-webgpu@2.5.3", "mldrift-cl@2.2.0"}) {
    const std::string prefix =
        dir.file(std::string("s_") + (std::string(target).find("webgpu") != std::string::npos ? "webgpu" : "cl"));
    const auto r = testing::RunGpuclean("convert " + onnx + " --target " + target + " --host-ops auto -q -o " + prefix);
    ASSERT_EQ(r.exit_code, 0) << target << "\n" << r.out << r.err;
    EXPECT_EQ(r.err.find("stays in the graph"), std::string::npos) << r.err;
    const pipeline::Spec spec = pipeline::LoadSpec(prefix + ".pipeline.json");
    for (const pipeline::Stage& s : spec.stages) {
      EXPECT_EQ(s.kind, pipeline::Stage::Kind::kGraph) << s.name;
      if (s.placement != "gpu") continue;
      const auto lint = testing::RunGpuclean("lint " + dir.file(s.graph) + " --target " + target);
      EXPECT_EQ(lint.exit_code, 0) << s.graph << " " << target << ": " << lint.out << lint.err;
    }
  }
  const auto webgpu = testing::RunGpuclean("pipeline prove " + dir.file("s_webgpu.pipeline.json") + " --against " +
                                           onnx + " --runtime litert-webgpu --precision fp16 -q");
  ASSERT_EQ(webgpu.exit_code, 0) << webgpu.out << webgpu.err;
  EXPECT_NE(webgpu.out.find("litert-wasm"), std::string::npos) << webgpu.out;
  for (size_t at = webgpu.out.find("litert-webgpu "); at != std::string::npos;
       at = webgpu.out.find("litert-webgpu ", at + 1)) {
    const std::string line = webgpu.out.substr(at, webgpu.out.find('\n', at) - at);
    EXPECT_NE(line.find("fully delegated"), std::string::npos) << line;
  }
}

// A detector whose NMS sits inside the ONNX graph (torchvision's
// postprocessing: NonZero, TopK of min(k, n), If, NonMaxSuppression): the
// convolution on the GPU, the postprocessing - padded tensors and counts -
// in a CPU graph, the outputs cut to their valid rows by the spec. On
// LiteRT.js the CPU graph's NON_MAX_SUPPRESSION_V4 runs on wasm.
TEST(ConvertHostOps, ADetectorWithItsNmsInsideConvertsToAGpuGraphAndACpuGraph) {
  testing::TempDir dir;
  const std::string onnx = testing::DetectorWithNms().Write(dir.file("detector.onnx"));
  const auto r = testing::RunGpuclean("convert " + onnx + " --target mldrift-webgpu@2.5.3 --host-ops auto -q -o " +
                                      dir.file("det"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const pipeline::Spec spec = pipeline::LoadSpec(dir.file("det.pipeline.json"));
  ASSERT_EQ(spec.valid_rows.size(), 3u);
  EXPECT_EQ(spec.valid_rows[0].output, "det_boxes");
  int gpu = 0, nms_on_cpu = 0;
  for (size_t s = 0; s < spec.stages.size(); ++s) {
    gpu += spec.stages[s].placement == "gpu";
    for (const ir::Op& op : spec.models[s]->main().ops)
      nms_on_cpu += op.code == tfl::BuiltinOperator_NON_MAX_SUPPRESSION_V4 && spec.stages[s].placement == "cpu";
  }
  EXPECT_GE(gpu, 1);
  EXPECT_EQ(nms_on_cpu, 1);
  const auto litert = testing::RunGpuclean("pipeline prove " + dir.file("det.pipeline.json") + " --against " + onnx +
                                           " --runtime litert-webgpu --precision fp16 -q");
  ASSERT_EQ(litert.exit_code, 0) << litert.out << litert.err;
  EXPECT_NE(litert.out.find("litert-wasm"), std::string::npos) << litert.out;
  EXPECT_NE(litert.out.find("fully delegated"), std::string::npos) << litert.out;
  EXPECT_NE(litert.out.find("detections pass"), std::string::npos) << litert.out;
}

// Every graph of the pipeline on LiteRT.js's real WebGPU delegate (fp16),
// the host steps between them, against onnxruntime on the ONNX model.
TEST(ConvertHostOps, ThePipelineRunsFullyDelegatedOnWebGpuAndMatchesOnnxRuntime) {
  testing::TempDir dir;
  const std::string onnx = TwoStageModel().Write(dir.file("two_stage.onnx"));
  const auto r = testing::RunGpuclean("convert " + onnx + " --target mldrift-webgpu@2.5.3 --host-ops auto -q -o " +
                                      dir.file("ts"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto webgpu = testing::RunGpuclean("pipeline prove " + dir.file("ts.pipeline.json") + " --against " + onnx +
                                           " --runtime litert-webgpu --precision fp16 -q");
  ASSERT_EQ(webgpu.exit_code, 0) << webgpu.out << webgpu.err;
  size_t graphs = 0;
  for (size_t at = webgpu.out.find("litert-webgpu "); at != std::string::npos;
       at = webgpu.out.find("litert-webgpu ", at + 1)) {
    const std::string line = webgpu.out.substr(at, webgpu.out.find('\n', at) - at);
    EXPECT_NE(line.find("fully delegated"), std::string::npos) << line;
    ++graphs;
  }
  EXPECT_GE(graphs, 2u) << webgpu.out;
  EXPECT_NE(webgpu.out.find("verdict: PASS"), std::string::npos) << webgpu.out;
}

// A real-weight model nobody here wrote (BlazeFace from an npm package,
// tools/fetch_npm_onnx.sh) that the target takes whole: exit 0 means a file
// to run - the one graph, PREFIX.tflite, named by its signature - and no
// pipeline.
TEST(ConvertHostOps, AModelThatNeedsNoCutIsWrittenAsOneGraph) {
  const std::string onnx = (testing::OnnxCache() / "npm" / "blazeface_128.onnx").string();
  ASSERT_TRUE(std::filesystem::exists(onnx)) << onnx << " missing: run tools/fetch_npm_onnx.sh";
  testing::TempDir dir;
  const auto r = testing::RunGpuclean("convert " + onnx + " --target mldrift-webgpu@2.5.3 --host-ops auto -q -o " +
                                      dir.file("bf"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("wrote the one graph"), std::string::npos) << r.out;
  EXPECT_TRUE(std::filesystem::exists(dir.file("bf.tflite")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("bf.pipeline.json")));
  const auto inspect = testing::RunGpuclean("inspect " + dir.file("bf.tflite"));
  EXPECT_NE(inspect.out.find("signature 'serving_default'"), std::string::npos) << inspect.out;
}

}  // namespace
}  // namespace gpuclean
