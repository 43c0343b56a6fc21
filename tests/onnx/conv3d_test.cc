// ctest-labels: litert
// 3-D convolutions (video, volumes) lowered to 2-D ones over frames as the
// batch, proven against onnxruntime; GPU-clean for the targets.
#include <gtest/gtest.h>

#include "onnx/op_test_util.h"

namespace gpuclean {
namespace {

using testing::ConvertModel;
using testing::CountOp;
using testing::OnnxTestModel;
using testing::RandomValues;

// x [1, 3, 6, 9, 10] through one Conv with the given geometry.
OnnxTestModel Conv3dModel(int64_t groups, const std::vector<int64_t>& kernel, const std::vector<int64_t>& strides,
                          const std::vector<int64_t>& pads, const std::vector<int64_t>& dilations, bool bias) {
  OnnxTestModel m;
  const int64_t in_channels = 6, out_channels = 6;
  m.Input("x", {2, in_channels, 6, 9, 10});
  const int64_t per_group = in_channels / groups;
  const int64_t count = out_channels * per_group * kernel[0] * kernel[1] * kernel[2];
  m.InitF32("w", {out_channels, per_group, kernel[0], kernel[1], kernel[2]}, RandomValues(count, 17));
  std::vector<std::string> inputs = {"x", "w"};
  if (bias) {
    m.InitF32("b", {out_channels}, RandomValues(out_channels, 18));
    inputs.push_back("b");
  }
  m.Node("Conv", inputs, {"y"})
      .Int("group", groups)
      .Ints("kernel_shape", kernel)
      .Ints("strides", strides)
      .Ints("pads", pads)
      .Ints("dilations", dilations);
  m.Output("y");
  return m;
}

// The R3D stem's geometry: (3,7,7) stride (1,2,2) padding (1,3,3); the
// temporal taps are one CONV_2D over their concatenated frame stacks.
TEST(Conv3d, UngroupedTapsAreOneConvolution) {
  const auto r = ConvertModel(Conv3dModel(1, {3, 7, 7}, {1, 2, 2}, {1, 3, 3, 1, 3, 3}, {1, 1, 1}, true));
  ASSERT_TRUE(r.proven) << r.RenderText();
  EXPECT_EQ(CountOp(r, "CONV_2D"), 1) << r.RenderText();
}

TEST(Conv3d, TemporalStrideDilationAndUnevenPads) {
  const auto r = ConvertModel(Conv3dModel(1, {2, 3, 3}, {2, 1, 2}, {1, 0, 2, 0, 1, 1}, {2, 1, 1}, false));
  ASSERT_TRUE(r.proven) << r.RenderText();
}

// Depthwise and grouped 3-D convolutions (X3D, CSN): one 2-D convolution
// per temporal tap, added.
TEST(Conv3d, DepthwiseAndGroupedTapsAreAdded) {
  const auto depthwise = ConvertModel(Conv3dModel(6, {3, 3, 3}, {1, 1, 1}, {1, 1, 1, 1, 1, 1}, {1, 1, 1}, true));
  ASSERT_TRUE(depthwise.proven) << depthwise.RenderText();
  EXPECT_EQ(CountOp(depthwise, "DEPTHWISE_CONV_2D"), 3) << depthwise.RenderText();
  const auto grouped = ConvertModel(Conv3dModel(2, {3, 1, 1}, {1, 1, 1}, {1, 0, 0, 1, 0, 0}, {1, 1, 1}, true));
  ASSERT_TRUE(grouped.proven) << grouped.RenderText();
}

// A (2+1)-D block as video networks write it - spatial (1,3,3) then
// temporal (3,1,1) convolution, ReLU, 3-D max pool, global pool - converts
// with no error left for the GPU targets: the clip's input is its NDHWC
// frames [D, H, W, C], so no rank-5 tensor reaches the GPU.
TEST(Conv3d, AVideoBlockIsGpuCleanForTheTargets) {
  OnnxTestModel m;
  m.Input("video", {1, 3, 8, 16, 16});
  m.InitF32("ws", {8, 3, 1, 3, 3}, RandomValues(8 * 3 * 9, 21));
  m.InitF32("wt", {8, 8, 3, 1, 1}, RandomValues(8 * 8 * 3, 22));
  m.Node("Conv", {"video", "ws"}, {"s"}).Ints("kernel_shape", {1, 3, 3}).Ints("pads", {0, 1, 1, 0, 1, 1});
  m.Node("Relu", {"s"}, {"sr"});
  m.Node("Conv", {"sr", "wt"}, {"t"}).Ints("kernel_shape", {3, 1, 1}).Ints("pads", {1, 0, 0, 1, 0, 0});
  m.Node("Relu", {"t"}, {"tr"});
  m.Node("MaxPool", {"tr"}, {"p"}).Ints("kernel_shape", {2, 2, 2}).Ints("strides", {2, 2, 2});
  m.Node("GlobalAveragePool", {"p"}, {"pooled"});
  m.Node("Flatten", {"pooled"}, {"features"});
  m.Output("features");
  for (const std::string target : {"mldrift-webgpu@2.5.3", "mldrift-cl@2.2.0"}) {
    testing::TempDir dir;
    convert::Options o;
    o.onnx_path = m.Write(dir.file("video.onnx"));
    o.target = target;
    const convert::Result r = convert::Convert(o);
    ASSERT_TRUE(r.report.proven) << r.report.RenderText();
    EXPECT_EQ(r.report.target.errors_after, 0) << r.report.RenderText();
    EXPECT_TRUE(r.report.target.clean) << r.report.RenderText();
  }
  // With --io-layout nhwc the input is the clip's NDHWC frames, and no
  // TRANSPOSE is left.
  testing::TempDir dir;
  convert::Options o;
  o.onnx_path = m.Write(dir.file("video.onnx"));
  o.target = "mldrift-webgpu@2.5.3";
  o.nhwc_io = true;
  const convert::Result r = convert::Convert(o);
  ASSERT_TRUE(r.report.proven) << r.report.RenderText();
  EXPECT_TRUE(r.report.target.clean) << r.report.RenderText();
  EXPECT_EQ(CountOp(r.report, "TRANSPOSE"), 0) << r.report.RenderText();
  const ir::Subgraph& g = r.model.main();
  EXPECT_EQ(g.tensors[g.inputs[0]].shape, (std::vector<int32_t>{8, 16, 16, 3}));
}

}  // namespace
}  // namespace gpuclean
