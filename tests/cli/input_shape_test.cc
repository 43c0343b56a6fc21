// ctest-labels: litert webgpu slow
// Models with dynamic dimensions (-1 in shape_signature, as Keras exports
// write the batch) run at their stored shape as LiteRT does, and
// --input-shape runs them at another; both against LiteRT.js.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "gpuclean/builder.h"
#include "gpuclean/format.h"
#include "gpuclean/npy.h"
#include "gpuclean/run.h"
#include "support/conformance.h"
#include "support/test_support.h"

namespace gpuclean {
namespace {

using testing::RunGpuclean;
using testing::ShellQuote;

// x [?,8,8,4] -> relu -> spatial mean -> fully connected: every computed
// shape follows the batch.
ir::Model DynamicBatchGraph() {
  builder::GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 8, 8, 4});
  std::vector<float> w(3 * 4), bias(3);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.25f * static_cast<float>(i % 5) - 0.5f;
  for (size_t i = 0; i < bias.size(); ++i) bias[i] = 0.1f * static_cast<float>(i);
  const int pooled = b.Mean(b.Relu(x), {1, 2}, /*keep_dims=*/false);
  b.Output(b.FullyConnected(pooled, b.ConstF32("w", {3, 4}, w), b.ConstF32("b", {3}, bias)));
  ir::Model m = b.Finish();
  for (int32_t t : m.main().inputs) {
    m.main().tensors[t].shape_signature = m.main().tensors[t].shape;
    m.main().tensors[t].shape_signature[0] = -1;
  }
  return m;
}

TEST(InputShape, StoredShapeRunsLikeLiteRtOnARealKerasExport) {
  // The objectron models declare a dynamic batch.
  const std::string model = testing::ZooModel("object_detection_3d_chair.tflite");
  const ir::Model m = format::ReadModel(model);
  ASSERT_TRUE(m.main().tensors[m.main().inputs[0]].is_dynamic());
  const std::vector<npy::Array> inputs = testing::MakeInputs(model, 5);
  const std::vector<npy::Array> ours = testing::RunOurs(m, inputs);
  const std::vector<npy::Array> litert = testing::RunLiteRt(model, inputs);
  ASSERT_EQ(ours.size(), litert.size());
  for (size_t i = 0; i < ours.size(); ++i) {
    EXPECT_EQ(ours[i].shape, litert[i].shape) << "output " << i;
    const testing::Agreement a = testing::Compare(litert[i], ours[i]);
    EXPECT_LE(a.max_abs_diff, 1e-4 * std::max(1.0, a.max_abs_ref)) << "output " << i;
  }
  testing::TempDir dir;
  auto run = RunGpuclean("run " + ShellQuote(model) + " --out " + ShellQuote(dir.file("out")));
  EXPECT_EQ(run.exit_code, 0) << run.err;
  auto bisect = RunGpuclean("bisect --json " + ShellQuote(model));
  EXPECT_TRUE(bisect.exit_code == 0 || bisect.exit_code == 1) << bisect.err;
  auto check = RunGpuclean("check --no-probe --json " + ShellQuote(model));
  ASSERT_TRUE(check.exit_code == 0 || check.exit_code == 1) << check.err;
  EXPECT_TRUE(nlohmann::json::parse(check.out)["bisect"].is_object()) << check.out;
}

TEST(InputShape, PinnedBatchMatchesLiteRtAtThatShape) {
  const ir::Model dynamic = DynamicBatchGraph();
  const ir::Model pinned = exec::WithInputShapes(dynamic, exec::ParseInputShapes({"x=3,8,8,4"}));
  const ir::Subgraph& g = pinned.main();
  EXPECT_EQ(g.tensors[g.outputs[0]].shape, (std::vector<int32_t>{3, 3}));
  // LiteRT.js runs the written model at its stored (pinned) shape.
  testing::ExpectMatchesLiteRt(pinned, exec::PrepareInputs(pinned.main(), {}, 7));

  testing::TempDir dir;
  const std::string path = dir.file("dynamic.tflite");
  format::WriteModel(dynamic, path);
  auto run = RunGpuclean("run " + ShellQuote(path) + " --input-shape 0=2,8,8,4 --out " + ShellQuote(dir.file("o")));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(npy::Read(dir.file("o/out0.npy")).shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(npy::Read(dir.file("o/in0.npy")).shape, (std::vector<int64_t>{2, 8, 8, 4}));
  const ir::Subgraph& dg = dynamic.main();
  const std::string cut = dg.tensors[dg.ops[0].outputs[0]].name;
  for (const std::string& command :
       std::vector<std::string>{"bisect", "check --no-probe", "fix --dry-run", "split --dry-run --at " + cut}) {
    SCOPED_TRACE(command);
    auto r = RunGpuclean(command + " " + ShellQuote(path) + " --input-shape x=2,8,8,4");
    EXPECT_NE(r.exit_code, 2) << r.err;
  }
}

TEST(InputShape, BadShapesAreOneLineUsageErrors) {
  testing::TempDir dir;
  const std::string path = dir.file("dynamic.tflite");
  format::WriteModel(DynamicBatchGraph(), path);
  for (const char* spec :
       {"x=1,9,8,4", "x=2,8,8", "nosuch=1,8,8,4", "x=0,8,8,4", "x=", "x=a,b", "x=99999999999,1,1,1"}) {
    SCOPED_TRACE(spec);
    auto r = RunGpuclean("run " + ShellQuote(path) + " --input-shape " + ShellQuote(spec) + " --out " +
                         ShellQuote(dir.file("o")));
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

}  // namespace
}  // namespace gpuclean
