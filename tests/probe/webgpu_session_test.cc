// ctest-labels: litert webgpu
// probe::WebGpuSession: requests that arrive one at a time share one
// Chromium page and WebGPU device (litert_webgpu.mjs --serve), a failing
// request leaves the session usable, and the harness's answer for a job it
// could not run names the problem. One TEST: each would start Chromium.
#include <fstream>

#include <gtest/gtest.h>

#include "gpuclean/builder.h"
#include "gpuclean/error.h"
#include "gpuclean/format.h"
#include "gpuclean/probe.h"
#include "support/test_support.h"

namespace gpuclean::probe {
namespace {

std::string WriteScaleGraph(const std::string& path, float scale) {
  builder::GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 4, 4, 8});
  b.Output(b.Mul(x, b.ConstF32("s", {}, {scale})));
  format::WriteModel(b.Finish(), path);
  return path;
}

TEST(WebGpuSession, RequestsOneAtATimeShareOnePageAndSurviveAFailure) {
  testing::TempDir dir;
  const std::string twice = WriteScaleGraph(dir.file("twice.tflite"), 2.0f);
  const std::string thrice = WriteScaleGraph(dir.file("thrice.tflite"), 3.0f);
  npy::Array x;
  x.shape = {1, 4, 4, 8};
  x.data.resize(128 * sizeof(float));
  for (int i = 0; i < 128; ++i) x.as<float>()[i] = 0.25f * static_cast<float>(i % 9) - 1.0f;
  npy::Write(dir.file("x.npy"), x);

  WebGpuSession session;
  auto request = [&](const std::string& model, const std::string& out) {
    ProbeRequest q;
    q.model_path = model;
    q.out_dir = dir.file(out);
    q.inputs = {{"0", dir.file("x.npy")}};
    return q;
  };
  const ProbeResult a = session.Run(request(twice, "a"));
  // Written between the two runs, as a host step's output would be.
  std::ofstream(dir.file("broken.tflite")) << "not a model";
  try {
    session.Run(request(dir.file("broken.tflite"), "broken"));
    ADD_FAILURE() << "a broken model ran";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadInput) << e.what();
    EXPECT_NE(std::string(e.what()).find("broken.tflite"), std::string::npos) << e.what();
  }
  const ProbeResult b = session.Run(request(thrice, "b"));
  EXPECT_EQ(session.runs(), 3);

  ASSERT_EQ(a.outputs.size(), 1u);
  ASSERT_EQ(b.outputs.size(), 1u);
  for (int i = 0; i < 128; ++i) {
    EXPECT_FLOAT_EQ(a.outputs[0].as<float>()[i], 2.0f * x.as<float>()[i]) << i;
    EXPECT_FLOAT_EQ(b.outputs[0].as<float>()[i], 3.0f * x.as<float>()[i]) << i;
  }
  EXPECT_TRUE(a.residency.fully_delegated.value_or(false));
  EXPECT_TRUE(b.residency.fully_delegated.value_or(false));
  // One page: the first request launched it, the third was served by it.
  EXPECT_EQ(a.meta.value("served", -1), 0);
  EXPECT_TRUE(a.meta.value("first_in_browser", false));
  EXPECT_EQ(b.meta.value("served", -1), 2);
  EXPECT_FALSE(b.meta.value("first_in_browser", true));
  EXPECT_EQ(a.meta.value("browser_launch_ms", -1.0), b.meta.value("browser_launch_ms", -2.0));
}

}  // namespace
}  // namespace gpuclean::probe
