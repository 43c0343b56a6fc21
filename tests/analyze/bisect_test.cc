// ctest-labels: slow
// Bisect finds the op where fp16-compute breaks, names the cause and the fix
// from the catalog, and stays quiet where nothing breaks.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <random>

#include "gpuclean/bisect.h"
#include "gpuclean/builder.h"
#include "gpuclean/format.h"
#include "support/test_support.h"
#include "support/tflite_names.h"

namespace gpuclean::analyze {
namespace {

using builder::GraphBuilder;
using ::gpuclean::testing::tflite_names::kF32;

npy::Array Uniform(std::vector<int64_t> shape, float lo, float hi, uint32_t seed) {
  npy::Array a;
  a.dtype = kF32;
  a.shape = std::move(shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(static_cast<size_t>(a.num_elements()));
  for (float& x : v) x = u(rng);
  a.data.resize(v.size() * 4);
  std::memcpy(a.data.data(), v.data(), a.data.size());
  return a;
}

// LayerNorm as converters emit it: mean, x - mean, mean of squares, rsqrt.
std::shared_ptr<const ir::Model> LayerNorm(int channels) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {1, 8, channels});
  const int mean = b.Mean(x, {-1}, true);
  const int d = b.Sub(x, mean);
  const int var = b.Mean(b.Mul(d, d), {-1}, true);
  b.Output(b.Mul(d, b.Rsqrt(b.Add(var, b.ConstF32("eps", {}, {1e-5f})))));
  return std::make_shared<const ir::Model>(b.Finish());
}

BisectSide Mode(const std::shared_ptr<const ir::Model>& m, exec::Precision p) {
  return {m, std::string(exec::PrecisionName(p)), p};
}

TEST(Bisect, LayerNormMeanOverflowIsTheFirstBreak) {
  // FACTS.md: 256 channels at |x| ~ 440 overflow the channel sum.
  auto model = LayerNorm(256);
  const BisectReport r = Bisect(Mode(model, exec::Precision::kFp32), Mode(model, exec::Precision::kFp16Compute),
                                {Uniform({1, 8, 256}, 420, 460, 1)});
  ASSERT_TRUE(r.first_break.has_value());
  const TensorDivergence& d = r.tensors[*r.first_break];
  EXPECT_EQ(d.op_index, 0);
  EXPECT_EQ(d.op_name, "MEAN");
  EXPECT_EQ(r.cause, Cause::kOverflow);
  EXPECT_EQ(r.fix_pass, "safe-layernorm-v2");
  ASSERT_TRUE(r.nonfinite_origin.has_value());
  EXPECT_EQ(r.nonfinite_origin->op_index, 0);
  EXPECT_EQ(r.nonfinite_origin->count, 8);
  ASSERT_EQ(r.outputs.size(), 1u);
  EXPECT_GT(r.outputs[0].nonfinite_got, 0);
}

TEST(Bisect, SmallActivationsDoNotBreak) {
  auto model = LayerNorm(256);
  const BisectReport r = Bisect(Mode(model, exec::Precision::kFp32), Mode(model, exec::Precision::kFp16Compute),
                                {Uniform({1, 8, 256}, -2, 2, 2)});
  EXPECT_FALSE(r.first_break.has_value()) << RenderText(r);
  EXPECT_EQ(r.cause, Cause::kNone);
  EXPECT_FALSE(r.nonfinite_origin.has_value());
}

TEST(Bisect, RmsNormSquareOverflowPointsAtScaleFirst) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {1, 4, 64});
  const int ms = b.Mean(b.Mul(x, x), {-1}, true);
  b.Output(b.Mul(x, b.Rsqrt(ms)));
  auto model = std::make_shared<const ir::Model>(b.Finish());
  const BisectReport r = Bisect(Mode(model, exec::Precision::kFp32), Mode(model, exec::Precision::kFp16Storage),
                                {Uniform({1, 4, 64}, 250, 300, 3)});
  ASSERT_TRUE(r.first_break.has_value());
  EXPECT_EQ(r.tensors[*r.first_break].op_name, "MUL");
  EXPECT_EQ(r.cause, Cause::kOverflow);
  EXPECT_EQ(r.fix_pass, "rmsnorm-scale-first");
}

TEST(Bisect, LongReductionLosesPrecision) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {1, 64, 64, 8});
  b.Output(b.Mean(x, {1, 2}, false));
  auto model = std::make_shared<const ir::Model>(b.Finish());
  const BisectReport r = Bisect(Mode(model, exec::Precision::kFp32), Mode(model, exec::Precision::kFp16Compute),
                                {Uniform({1, 64, 64, 8}, 0, 8, 4)});
  ASSERT_TRUE(r.first_break.has_value()) << RenderText(r);
  EXPECT_EQ(r.cause, Cause::kReductionExtent) << r.why;
  EXPECT_EQ(r.fix_pass, "mean-split-axes");
}

TEST(Bisect, TwoModelFilesMatchedByTensorName) {
  // The same graph as two files: every tensor agrees bit for bit.
  testing::TempDir dir;
  auto model = LayerNorm(16);
  format::WriteModel(*model, dir.file("a.tflite"));
  auto copy = std::make_shared<const ir::Model>(format::ReadModel(dir.file("a.tflite")));
  const BisectReport r = Bisect(Mode(model, exec::Precision::kFp32), {copy, "a.tflite", exec::Precision::kFp32},
                                {Uniform({1, 8, 16}, -1, 1, 5)});
  EXPECT_FALSE(r.first_break.has_value());
  ASSERT_FALSE(r.tensors.empty());
  for (const TensorDivergence& d : r.tensors) EXPECT_TRUE(d.metrics.bit_identical) << d.name;
}

TEST(Bisect, CommandLineComparesAgainstTheTargetsNumericModel) {
  // A LayerNorm over 256 channels at |x| ~ 440 with mean ~ 0: the squares
  // pass 65504. fp16-compute (the default target's model) breaks there; the
  // WebGPU model computes the whole norm in one float kernel.
  testing::TempDir dir;
  format::WriteModel(*LayerNorm(256), dir.file("ln.tflite"));
  npy::Write(dir.file("x.npy"), Uniform({1, 8, 256}, -440, 440, 6));
  const std::string args = "bisect " + testing::ShellQuote(dir.file("ln.tflite")) +
                           " --input x=" + testing::ShellQuote(dir.file("x.npy")) + " --json";
  auto cl = testing::RunGpuclean(args);
  EXPECT_EQ(cl.exit_code, 1) << cl.err;
  EXPECT_EQ(nlohmann::json::parse(cl.out)["b"], "fp16-compute");
  auto webgpu = testing::RunGpuclean(args + " --target mldrift-webgpu@2.5.3");
  EXPECT_EQ(webgpu.exit_code, 0) << webgpu.err;
  EXPECT_EQ(nlohmann::json::parse(webgpu.out)["b"], "fp16-fused");
  auto storage = testing::RunGpuclean(args + " --target mldrift-webgpu@2.5.3 --b fp16-storage");
  EXPECT_EQ(storage.exit_code, 1) << "an explicit mode wins over the target's";
  EXPECT_EQ(nlohmann::json::parse(storage.out)["b"], "fp16-storage");
  EXPECT_EQ(testing::RunGpuclean(args + " --target no-such-target").exit_code, 2);
}

TEST(Bisect, CommandLineReportsJsonHtmlAndOverlay) {
  testing::TempDir dir;
  format::WriteModel(*LayerNorm(256), dir.file("ln.tflite"));
  npy::Write(dir.file("x.npy"), Uniform({1, 8, 256}, 420, 460, 6));
  const std::string args = "bisect " + testing::ShellQuote(dir.file("ln.tflite")) +
                           " --input x=" + testing::ShellQuote(dir.file("x.npy")) + " --json --html " +
                           testing::ShellQuote(dir.file("r.html")) + " --overlay " +
                           testing::ShellQuote(dir.file("o.json"));
  auto r = testing::RunGpuclean(args);
  EXPECT_EQ(r.exit_code, 1) << r.err;  // a break is a finding
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["first_break"]["op_name"], "MEAN");
  EXPECT_EQ(j["first_break"]["fix_pass"], "safe-layernorm-v2");
  std::ifstream html(dir.file("r.html"));
  const std::string page((std::istreambuf_iterator<char>(html)), {});
  EXPECT_NE(page.find("First break: op 0 (MEAN)"), std::string::npos);
  EXPECT_EQ(page.find("<script src"), std::string::npos);
  std::ifstream overlay(dir.file("o.json"));
  const auto o = nlohmann::json::parse(overlay);
  EXPECT_TRUE(o["results"].contains(j["first_break"]["name"].get<std::string>()));

  auto clean =
      testing::RunGpuclean("bisect " + testing::ShellQuote(testing::FixtureModel("selfie_segmentation.tflite")));
  EXPECT_EQ(clean.exit_code, 0) << clean.err;
  EXPECT_NE(clean.out.find("no op diverges"), std::string::npos) << clean.out;
  auto bad = testing::RunGpuclean("bisect " + testing::ShellQuote(dir.file("ln.tflite")) + " --b nosuchmode");
  EXPECT_EQ(bad.exit_code, 2);
}

}  // namespace
}  // namespace gpuclean::analyze
