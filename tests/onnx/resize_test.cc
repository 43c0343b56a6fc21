// ctest-labels: litert
// Resize (and Upsample through the opset converter), proven against
// onnxruntime for every mode, coordinate transformation and nearest rounding,
// with scales and with sizes, up and down.
#include <gtest/gtest.h>

#include "onnx/op_test_util.h"

namespace gpuclean {
namespace {

using testing::ConvertModel;
using testing::CountOp;
using testing::OnnxTestModel;
using testing::RandomValues;

struct Target {
  std::string tag;
  std::vector<float> scales;  // empty: sizes
  std::vector<int64_t> sizes;
};

// x [1, 2, 5, 6] -> one output per (coordinate mode, target, extra attrs).
std::vector<Target> Targets() {
  return {{"up2", {1, 1, 2, 2}, {}},       {"up_frac", {1, 1, 1.5f, 1.7f}, {}}, {"down", {1, 1, 0.6f, 0.5f}, {}},
          {"sizes_up", {}, {1, 2, 9, 13}}, {"sizes_down", {}, {1, 2, 3, 4}},    {"sizes_mixed", {}, {1, 2, 8, 4}}};
}

TEST(Resize, NearestEveryCoordinateModeAndRounding) {
  for (const char* coord :
       {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn"}) {
    OnnxTestModel m;
    m.Input("x", {1, 2, 5, 6});
    int n = 0;
    for (const char* nm : {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}) {
      for (const Target& t : Targets()) {
        const std::string out = std::string(nm) + "_" + t.tag;
        const std::string s = "s" + std::to_string(n++);
        if (!t.scales.empty()) {
          m.InitF32(s, {4}, t.scales);
          m.Node("Resize", {"x", "", s}, {out})
              .Str("mode", "nearest")
              .Str("coordinate_transformation_mode", coord)
              .Str("nearest_mode", nm);
        } else {
          m.InitI64(s, {4}, t.sizes);
          m.Node("Resize", {"x", "", "", s}, {out})
              .Str("mode", "nearest")
              .Str("coordinate_transformation_mode", coord)
              .Str("nearest_mode", nm);
        }
        m.Output(out);
      }
    }
    const auto r = ConvertModel(m);
    EXPECT_TRUE(r.proven) << coord << "\n" << r.RenderText();
  }
}

TEST(Resize, NearestIntegerUpscaleIsTheTfliteOp) {
  // PyTorch's nn.Upsample(scale_factor=2): asymmetric + floor.
  OnnxTestModel m;
  m.Input("x", {1, 3, 4, 5});
  m.InitF32("s", {4}, {1, 1, 2, 2});
  m.Node("Resize", {"x", "", "s"}, {"y"})
      .Str("mode", "nearest")
      .Str("coordinate_transformation_mode", "asymmetric")
      .Str("nearest_mode", "floor");
  m.Output("y");
  const auto r = ConvertModel(m);
  ASSERT_TRUE(r.proven) << r.RenderText();
  EXPECT_EQ(CountOp(r, "RESIZE_NEAREST_NEIGHBOR"), 1) << r.RenderText();
  EXPECT_EQ(CountOp(r, "GATHER"), 0);
}

TEST(Resize, LinearEveryCoordinateMode) {
  for (const char* coord :
       {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn"}) {
    OnnxTestModel m;
    m.Input("x", {1, 2, 5, 6});
    int n = 0;
    for (const Target& t : Targets()) {
      const std::string out = "y_" + t.tag;
      const std::string s = "s" + std::to_string(n++);
      if (!t.scales.empty()) {
        m.InitF32(s, {4}, t.scales);
        m.Node("Resize", {"x", "", s}, {out}).Str("mode", "linear").Str("coordinate_transformation_mode", coord);
      } else {
        m.InitI64(s, {4}, t.sizes);
        m.Node("Resize", {"x", "", "", s}, {out}).Str("mode", "linear").Str("coordinate_transformation_mode", coord);
      }
      m.Output(out);
    }
    const auto r = ConvertModel(m);
    EXPECT_TRUE(r.proven) << coord << "\n" << r.RenderText();
  }
}

TEST(Resize, BilinearHalfPixelIsTheTfliteOp) {
  // torch F.interpolate(mode='bilinear', align_corners=False / True).
  for (const char* coord : {"pytorch_half_pixel", "half_pixel", "align_corners"}) {
    OnnxTestModel m;
    m.Input("x", {1, 3, 7, 9});
    m.InitI64("sz", {4}, {1, 3, 20, 17});
    m.Node("Resize", {"x", "", "", "sz"}, {"y"}).Str("mode", "linear").Str("coordinate_transformation_mode", coord);
    m.Output("y");
    const auto r = ConvertModel(m);
    ASSERT_TRUE(r.proven) << r.RenderText();
    EXPECT_EQ(CountOp(r, "RESIZE_BILINEAR"), 1) << coord << "\n" << r.RenderText();
  }
}

TEST(Resize, CubicWithCoefficientAndExcludeOutside) {
  for (const char* coord : {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"}) {
    OnnxTestModel m;
    m.Input("x", {1, 2, 5, 6});
    int n = 0;
    for (int exclude : {0, 1}) {
      for (float a : {-0.75f, -0.5f}) {
        for (const Target& t : {Targets()[1], Targets()[2], Targets()[3]}) {
          const std::string out = "y" + std::to_string(n);
          const std::string s = "s" + std::to_string(n++);
          if (!t.scales.empty()) {
            m.InitF32(s, {4}, t.scales);
            m.Node("Resize", {"x", "", s}, {out})
                .Str("mode", "cubic")
                .Str("coordinate_transformation_mode", coord)
                .Int("exclude_outside", exclude)
                .Float("cubic_coeff_a", a);
          } else {
            m.InitI64(s, {4}, t.sizes);
            m.Node("Resize", {"x", "", "", s}, {out})
                .Str("mode", "cubic")
                .Str("coordinate_transformation_mode", coord)
                .Int("exclude_outside", exclude)
                .Float("cubic_coeff_a", a);
          }
          m.Output(out);
        }
      }
    }
    const auto r = ConvertModel(m);
    EXPECT_TRUE(r.proven) << coord << "\n" << r.RenderText();
  }
}

TEST(Resize, TfCropAndResizeExtrapolates) {
  OnnxTestModel m;
  m.Input("x", {1, 2, 6, 6});
  m.InitF32("roi", {8}, {0, 0, -0.2f, 0.3f, 1, 1, 0.8f, 1.4f});
  m.InitI64("sz", {4}, {1, 2, 5, 7});
  m.Node("Resize", {"x", "roi", "", "sz"}, {"lin"})
      .Str("mode", "linear")
      .Str("coordinate_transformation_mode", "tf_crop_and_resize")
      .Float("extrapolation_value", 2.5f);
  m.Node("Resize", {"x", "roi", "", "sz"}, {"nn"})
      .Str("mode", "nearest")
      .Str("coordinate_transformation_mode", "tf_crop_and_resize")
      .Float("extrapolation_value", -3.0f);
  m.Output("lin");
  m.Output("nn");
  const auto r = ConvertModel(m);
  EXPECT_TRUE(r.proven) << r.RenderText();
}

TEST(Resize, NhwcProducerAndOtherRanks) {
  OnnxTestModel m;
  m.Input("x", {1, 3, 6, 5});
  m.InitF32("w", {4, 3, 1, 1}, RandomValues(12, 3));
  m.Node("Conv", {"x", "w"}, {"c"});  // stored NHWC
  m.InitF32("s_lin", {4}, {1, 1, 1.5f, 2.5f});
  m.Node("Resize", {"c", "", "s_lin"}, {"lin"})
      .Str("mode", "linear")
      .Str("coordinate_transformation_mode", "tf_half_pixel_for_nn");
  m.InitF32("s_ch", {4}, {1, 2, 1, 1});  // channels repeated: GATHER
  m.Node("Resize", {"c", "", "s_ch"}, {"ch"}).Str("mode", "nearest");
  m.Input("v", {2, 3, 7});
  m.InitF32("s_1d", {3}, {1, 1, 2.5f});
  m.Node("Resize", {"v", "", "s_1d"}, {"one_d"}).Str("mode", "linear");
  m.Node("Resize", {"v", "", "s_1d"}, {"one_d_nn"}).Str("mode", "nearest");
  for (const char* o : {"lin", "ch", "one_d", "one_d_nn"}) m.Output(o);
  const auto r = ConvertModel(m);
  EXPECT_TRUE(r.proven) << r.RenderText();
}

TEST(Resize, UpsampleFromOpset9) {
  OnnxTestModel m(9);
  m.Input("x", {1, 2, 4, 5});
  m.InitF32("s", {4}, {1, 1, 2, 3});
  m.Node("Upsample", {"x", "s"}, {"nn"}).Str("mode", "nearest");
  m.Node("Upsample", {"x", "s"}, {"lin"}).Str("mode", "linear");
  m.Output("nn");
  m.Output("lin");
  const auto r = ConvertModel(m);
  EXPECT_TRUE(r.proven) << r.RenderText();
}

}  // namespace
}  // namespace gpuclean
