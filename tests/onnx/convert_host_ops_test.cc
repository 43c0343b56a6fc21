// ctest-labels: litert webgpu
// convert --host-ops auto: an ONNX two-stage query selection (scores ->
// TopK -> Gather of the chosen queries -> head) becomes GPU graphs with the
// selection on the host, proven against onnxruntime on the ONNX model.
#include <filesystem>

#include <gtest/gtest.h>

#include "onnx/op_test_util.h"

namespace gpuclean {
namespace {

using testing::OnnxTestModel;
using testing::RandomValues;

OnnxTestModel TwoStageModel() {
  OnnxTestModel m;
  m.Input("features", {1, 50, 8});
  m.InitF32("scale", {8}, RandomValues(8, 3));
  m.Node("Mul", {"features", "scale"}, {"scaled"});
  m.Node("Tanh", {"scaled"}, {"feats"});
  m.Node("ReduceMax", {"feats"}, {"scores"}).Ints("axes", {2}).Int("keepdims", 0);
  m.InitI64("k", {1}, {10});
  m.Node("TopK", {"scores", "k"}, {"top_scores", "top_index"});
  m.InitI64("axis0", {1}, {0});
  m.Node("Squeeze", {"top_index", "axis0"}, {"index"});
  m.Node("Gather", {"feats", "index"}, {"queries"}).Int("axis", 1);
  m.InitF32("bias", {8}, RandomValues(8, 4));
  m.Node("Add", {"queries", "bias"}, {"head"});
  m.Output("head");
  m.Output("top_scores");
  return m;
}

TEST(ConvertHostOps, TopKAndGatherMoveToTheHostAndThePipelineIsProven) {
  const OnnxTestModel m = TwoStageModel();
  testing::TempDir dir;
  const std::string onnx = m.Write(dir.file("two_stage.onnx"));
  const auto r = testing::RunGpuclean("convert " + onnx + " --target mldrift-webgpu@2.5.3 --host-ops auto -q -o " +
                                      dir.file("ts"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("host  topk {\"k\":10}"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("verdict: PASS"), std::string::npos) << r.out;
  ASSERT_TRUE(std::filesystem::exists(dir.file("ts.pipeline.json")));
  EXPECT_TRUE(std::filesystem::exists(dir.file("ts.graph1.tflite")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("ts.prove")));
  // The pipeline proves again from the command that users run.
  const auto again = testing::RunGpuclean("pipeline prove " + dir.file("ts.pipeline.json") + " --against " + onnx);
  EXPECT_EQ(again.exit_code, 0) << again.out << again.err;

  const auto no_prefix = testing::RunGpuclean("convert " + onnx + " --host-ops auto -q");
  EXPECT_EQ(no_prefix.exit_code, 2);
  EXPECT_NE(no_prefix.err.find("--host-ops auto needs -o PREFIX"), std::string::npos) << no_prefix.err;
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

}  // namespace
}  // namespace gpuclean
