// ctest-labels: litert
// GridSample: bilinear and nearest, zeros, border and reflection padding, both
// align_corners, with a grid reaching outside the input; proven against
// onnxruntime. Bilinear with zeros padding has no gather (tent weights and
// one BATCH_MATMUL). Bicubic is refused by name.
#include <gtest/gtest.h>

#include "onnx/op_test_util.h"

namespace gpuclean {
namespace {

using testing::ConvertModel;
using testing::OnnxTestModel;
using testing::RefusalOf;

TEST(GridSample, ModesPaddingsAlignCorners) {
  OnnxTestModel m;
  m.Input("x", {2, 3, 5, 6});
  m.Input("g", {2, 4, 7, 2});
  m.InitF32("wide", {}, {2.7f});  // samples beyond the border too (reflected more than once)
  m.Node("Mul", {"g", "wide"}, {"grid"});
  int n = 0;
  for (const char* mode : {"bilinear", "nearest"})
    for (const char* pad : {"zeros", "border", "reflection"})
      for (int align : {0, 1}) {
        const std::string y = "y" + std::to_string(n++);
        m.Node("GridSample", {"x", "grid"}, {y}).Str("mode", mode).Str("padding_mode", pad).Int("align_corners", align);
        m.Output(y);
      }
  const auto r = ConvertModel(m);
  EXPECT_TRUE(r.proven) << r.RenderText();
}

TEST(GridSample, BilinearZerosIsGatherFree) {
  OnnxTestModel m;
  m.Input("x", {1, 8, 6, 5});
  m.Input("g", {1, 3, 4, 2});
  m.InitF32("wide", {}, {1.3f});  // some samples fall outside: their corners must give 0
  m.Node("Mul", {"g", "wide"}, {"grid"});
  for (int align : {0, 1}) {
    const std::string y = "y" + std::to_string(align);
    m.Node("GridSample", {"x", "grid"}, {y}).Int("align_corners", align);
    m.Output(y);
  }
  const auto r = ConvertModel(m);
  ASSERT_TRUE(r.proven) << r.RenderText();
  EXPECT_EQ(testing::CountOp(r, "GATHER_ND"), 0) << r.RenderText();
  EXPECT_EQ(testing::CountOp(r, "BATCH_MATMUL"), 2) << r.RenderText();
}

TEST(GridSample, BicubicIsRefused) {
  for (const auto& [mode, pad] : {std::pair{"bicubic", "zeros"}, std::pair{"bilinear", "wrap"}}) {
    OnnxTestModel m;
    m.Input("x", {1, 1, 4, 4});
    m.Input("g", {1, 2, 2, 2});
    m.Node("GridSample", {"x", "g"}, {"y"}).Str("mode", mode).Str("padding_mode", pad);
    m.Output("y");
    EXPECT_NE(RefusalOf(m).find("not supported"), std::string::npos) << RefusalOf(m);
  }
}

}  // namespace
}  // namespace gpuclean
