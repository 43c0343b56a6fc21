// ctest-labels: litert
// Bisect across formats: onnxruntime on the ONNX model against our
// interpreter on the converted graph, tensor by tensor in ONNX node order.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "gpuclean/convert.h"
#include "gpuclean/format.h"
#include "onnx/onnx_test_model.h"
#include "support/test_support.h"

namespace gpuclean {
namespace {

using testing::OnnxTestModel;
using testing::RandomValues;

// conv -> relu -> conv -> relu, with the ONNX names bisect must report.
std::string TwoConvs(const testing::TempDir& dir) {
  OnnxTestModel m;
  m.Input("x", {1, 3, 8, 8});
  m.InitF32("w1", {4, 3, 3, 3}, RandomValues(108, 1, 0.5f));
  m.InitF32("b1", {4}, RandomValues(4, 2, 0.5f));
  m.Node("Conv", {"x", "w1", "b1"}, {"c1"}).Ints("pads", {1, 1, 1, 1});
  m.Node("Relu", {"c1"}, {"r1"});
  m.InitF32("w2", {4, 4, 3, 3}, RandomValues(144, 3, 0.5f));
  m.InitF32("b2", {4}, RandomValues(4, 4, 0.5f));
  m.Node("Conv", {"r1", "w2", "b2"}, {"c2"}).Ints("pads", {1, 1, 1, 1});
  m.Node("Relu", {"c2"}, {"y"});
  m.Output("y");
  return m.Write(dir.file("two.onnx"));
}

// A copy of `model` with constant `name` shifted by `delta`.
ir::Model WithShiftedConstant(const ir::Model& model, const std::string& name, float delta) {
  ir::Model out = model;
  for (ir::Tensor& t : out.main().tensors) {
    if (t.name != name) continue;
    std::vector<float> v(t.data->as<float>().begin(), t.data->as<float>().end());
    for (float& x : v) x += delta;
    t.data = Bytes::FromValues<float>(v);
    return out;
  }
  ADD_FAILURE() << "no tensor " << name;
  return out;
}

TEST(BisectAcrossFormats, AgreesOnAFaithfulConversionAndNamesTheBrokenNode) {
  testing::TempDir dir;
  const std::string onnx = TwoConvs(dir);
  convert::Options o;
  o.onnx_path = onnx;
  o.output_path = dir.file("two.tflite");
  const convert::Result r = convert::Convert(o);
  ASSERT_TRUE(r.report.proven) << r.report.RenderText();

  const convert::Divergence same = convert::BisectAcrossFormats(onnx, format::ReadModel(o.output_path));
  EXPECT_FALSE(same.found) << same.node;
  EXPECT_GE(same.compared, 2);  // r1 and y: the convs' own outputs are folded away

  // Break the second convolution's bias: the first divergence is its output,
  // not the first conv's. Its Relu is folded into it (one CONV_2D), so the
  // tensor compared is the Relu's, and the node named is the pair.
  const ir::Model broken = WithShiftedConstant(format::ReadModel(o.output_path), "c2/bias", 0.5f);
  const convert::Divergence d = convert::BisectAcrossFormats(onnx, broken);
  ASSERT_TRUE(d.found);
  EXPECT_EQ(d.tensor, "y");
  EXPECT_EQ(d.node.find("Conv"), 0u) << d.node;
  EXPECT_NE(d.node.find("+ Relu"), std::string::npos) << d.node;
  EXPECT_NEAR(d.max_abs_diff, 0.5, 1e-3);

  // One intermediate per run on each side (a 1-byte budget): the same node,
  // found chunk by chunk.
  const convert::Divergence chunked = convert::BisectAcrossFormats(onnx, broken, {}, 1, 1e-4, /*chunk_bytes=*/1);
  ASSERT_TRUE(chunked.found);
  EXPECT_EQ(chunked.tensor, "y");
  EXPECT_EQ(chunked.compared, d.compared);
  EXPECT_FALSE(convert::BisectAcrossFormats(onnx, format::ReadModel(o.output_path), {}, 1, 1e-4, 1).found);

  // The same through the CLI, exit 1 with one line naming it.
  format::WriteModel(broken, dir.file("broken.tflite"));
  const auto cli = testing::RunGpuclean("bisect " + onnx + " --b " + dir.file("broken.tflite"));
  EXPECT_EQ(cli.exit_code, 1) << cli.err;
  EXPECT_NE(cli.out.find("first diverging ONNX node: Conv"), std::string::npos) << cli.out;
  EXPECT_NE(cli.out.find("'y'"), std::string::npos) << cli.out;
  const auto ok = testing::RunGpuclean("bisect " + onnx + " --b " + o.output_path + " --json");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find("\"diverged\": false"), std::string::npos) << ok.out;
}

TEST(BisectAcrossFormats, AFailedProofWritesNothingAndNamesTheFirstDivergingNode) {
  testing::TempDir dir;
  convert::Options o;
  o.onnx_path = TwoConvs(dir);
  o.output_path = dir.file("never.tflite");
  o.atol = 0;  // no float difference allowed: the first conv's rounding already fails
  o.min_correlation = 1.0;
  const convert::Result r = convert::Convert(o);
  EXPECT_TRUE(r.report.proof_run);
  EXPECT_FALSE(r.report.proven);
  EXPECT_FALSE(r.report.written);
  EXPECT_FALSE(std::filesystem::exists(o.output_path));
  EXPECT_FALSE(r.report.proof.empty());
  EXPECT_FALSE(r.report.proof[0].why.empty());
  // The search ran on the set that failed, and the report says what it found.
  EXPECT_TRUE(r.report.divergence.searched);
  EXPECT_EQ(r.report.divergence.set, r.report.proof[0].seed);
  EXPECT_TRUE(r.report.divergence.found || !r.report.divergence.none_because.empty());
  EXPECT_NE(r.report.RenderText().find("first diverging ONNX node: "), std::string::npos) << r.report.RenderText();
}

TEST(ConvertCli, ExitCodesAndReport) {
  testing::TempDir dir;
  const std::string onnx = TwoConvs(dir);
  const auto ok = testing::RunGpuclean("convert " + onnx + " -o " + dir.file("a.tflite") + " --json -q");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find("\"proven\": true"), std::string::npos) << ok.out;
  EXPECT_TRUE(std::filesystem::exists(dir.file("a.tflite")));
  EXPECT_EQ(ok.err, "");

  const auto text = testing::RunGpuclean("convert " + onnx + " -o " + dir.file("b.tflite") + " --io-layout nhwc");
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("transposes left: 0"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("wrote "), std::string::npos) << text.out;
  EXPECT_NE(text.err.find("convert: proving"), std::string::npos) << text.err;  // progress on stderr

  // Bad input: one line on stderr, exit 2, nothing written.
  std::ofstream(dir.file("garbage.onnx")) << "this is not a protobuf at all";
  const auto bad = testing::RunGpuclean("convert " + dir.file("garbage.onnx") + " -o " + dir.file("c.tflite"));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << bad.err;
  EXPECT_NE(bad.err.find("garbage.onnx"), std::string::npos) << bad.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("c.tflite")));

  const auto missing = testing::RunGpuclean("convert " + dir.file("nope.onnx"));
  EXPECT_EQ(missing.exit_code, 2);
  const auto usage = testing::RunGpuclean("convert " + onnx + " --io-layout nchw");
  EXPECT_EQ(usage.exit_code, 2);
}

}  // namespace
}  // namespace gpuclean
