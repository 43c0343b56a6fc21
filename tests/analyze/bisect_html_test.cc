// ctest-labels: litert webgpu
// The bisect HTML report opens in headless Chromium without errors or network
// requests, and its screenshot shows the graph with the first break outlined.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "gpuclean/builder.h"
#include "gpuclean/format.h"
#include "gpuclean/npy.h"
#include "support/test_support.h"

namespace gpuclean {
namespace {

using testing::ShellQuote;

TEST(BisectHtml, OpensInChromiumAndShowsTheBreak) {
  testing::TempDir dir;
  // A LayerNorm whose channel sum overflows in half: the MEAN is the break.
  builder::GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 4, 256});
  const int d = b.Sub(x, b.Mean(x, {-1}, true));
  const int var = b.Mean(b.Mul(d, d), {-1}, true);
  b.Output(b.Mul(d, b.Rsqrt(b.Add(var, b.ConstF32("eps", {}, {1e-5f})))));
  format::WriteModel(b.Finish(), dir.file("ln.tflite"));
  npy::Array in;
  in.dtype = tfl::TensorType_FLOAT32;
  in.shape = {1, 4, 256};
  std::vector<float> values(1024, 440.0f);
  for (size_t i = 0; i < values.size(); ++i) values[i] += static_cast<float>(i % 17);
  in.data.resize(values.size() * 4);
  std::memcpy(in.data.data(), values.data(), in.data.size());
  npy::Write(dir.file("x.npy"), in);

  auto r = testing::RunGpuclean("bisect " + ShellQuote(dir.file("ln.tflite")) + " --input 0=" +
                                ShellQuote(dir.file("x.npy")) + " --html " + ShellQuote(dir.file("r.html")));
  ASSERT_EQ(r.exit_code, 1) << r.err;
  auto shot = testing::RunCommand("node " + ShellQuote(testing::SourceDir() + "/probe/html_screenshot.mjs") + " " +
                                  ShellQuote(dir.file("r.html")) + " " + ShellQuote(dir.file("r.png")));
  ASSERT_EQ(shot.exit_code, 0) << shot.err;
  const auto j = nlohmann::json::parse(shot.out);
  EXPECT_TRUE(j["errors"].empty()) << j["errors"].dump();
  EXPECT_GE(j["svg_boxes"].get<int>(), 7);  // plot frame + one box per op output
  EXPECT_EQ(j["outlined"], 1);              // the first break
  EXPECT_GT(j["highlight_pixels"].get<int>(), 50) << "the outline is visible in the screenshot";
  EXPECT_GT(j["distinct_colours"].get<int>(), 5);
  EXPECT_GT(std::filesystem::file_size(dir.file("r.png")), 10000u);
}

}  // namespace
}  // namespace gpuclean
