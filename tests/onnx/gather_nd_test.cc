// ctest-labels: litert
// GatherElements and GatherND with constant and run-time (negative) indices,
// NonZero and Compress of constants, OneHot, Hardmax, Trilu and EyeLike, proven against onnxruntime.
#include <gtest/gtest.h>

#include "onnx/op_test_util.h"

namespace gpuclean {
namespace {

using testing::ConvertModel;
using testing::OnnxTestModel;

TEST(GatherNd, ElementsAndNd) {
  OnnxTestModel m;
  m.Input("x", {3, 4, 5});
  m.InitI64("ci", {3, 2, 5},
            {0, 1, 2, 3, -1, 3, 2, 1, 0, -4, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 3, 3, 3, 3, 3, 2, 2, 2, 2, 2});
  m.Node("GatherElements", {"x", "ci"}, {"ge_const"}).Int("axis", 1);
  m.Input("z", {3, 4, 2});
  testing::IntsFrom(m, "z", "ri", -5, 4);
  m.Node("GatherElements", {"x", "ri"}, {"ge_runtime"}).Int("axis", -1);
  m.InitI64("nd", {2, 2}, {0, 1, -1, 3});
  m.Node("GatherND", {"x", "nd"}, {"nd_const"});
  m.Input("q", {4, 1});
  testing::IntsFrom(m, "q", "qi", -3, 2);
  m.Node("GatherND", {"x", "qi"}, {"nd_runtime"});
  // NonZero of a constant mask folds; its coordinates then feed GatherND.
  m.InitF32("mask", {3, 4}, {0, 1, 0, 2, 0, 0, 0, 0, 3, 0, 0, -1});
  m.Node("NonZero", {"mask"}, {"nz"});
  m.Node("Transpose", {"nz"}, {"nz_t"}).Ints("perm", {1, 0});
  m.Node("GatherND", {"x", "nz_t"}, {"nd_nonzero"});
  m.InitF32("keep_f", {4}, {1, 0, 1, 1});  // a constant bool condition, via a folded Cast
  m.Node("Cast", {"keep_f"}, {"keep"}).Int("to", testing::kOnnxBool);
  // Compress's output shape is data-dependent for shape inference: reshape
  // to a constant shape so the graph outputs have one.
  m.Node("Compress", {"x", "keep"}, {"compressed_axis"}).Int("axis", 2);
  m.Node("Compress", {"x", "keep"}, {"compressed_flat"});
  m.InitI64("shape_axis", {3}, {3, 4, 3});
  m.InitI64("shape_flat", {1}, {3});
  m.Node("Reshape", {"compressed_axis", "shape_axis"}, {"compress_axis"});
  m.Node("Reshape", {"compressed_flat", "shape_flat"}, {"compress_flat"});
  for (const char* o :
       {"ge_const", "ge_runtime", "nd_const", "nd_runtime", "nd_nonzero", "compress_axis", "compress_flat"})
    m.Output(o);
  const auto r = ConvertModel(m);
  EXPECT_TRUE(r.proven) << r.RenderText();
}

TEST(GatherNd, OneHotHardmaxTrilu) {
  OnnxTestModel m;
  m.Input("z", {2, 3});
  testing::IntsFrom(m, "z", "idx", -4, 4);
  m.InitI64("depth", {}, {5});
  m.InitF32("vals", {2}, {-1.0f, 3.0f});
  m.Node("OneHot", {"idx", "depth", "vals"}, {"oh_last"});
  m.Node("OneHot", {"idx", "depth", "vals"}, {"oh_first"}).Int("axis", 0);
  m.Node("OneHot", {"idx", "depth", "vals"}, {"oh_mid"}).Int("axis", 1);
  m.Input("x", {2, 4, 5});
  m.Node("Hardmax", {"x"}, {"hm_last"});
  m.Node("Hardmax", {"x"}, {"hm_mid"}).Int("axis", 1);
  m.Node("Trilu", {"x"}, {"upper"});
  m.Node("Trilu", {"x"}, {"lower"}).Int("upper", 0);
  m.InitI64("k1", {}, {1});
  m.InitI64("km2", {}, {-2});
  m.Node("Trilu", {"x", "k1"}, {"upper_k"});
  m.Node("Trilu", {"x", "km2"}, {"lower_k"}).Int("upper", 0);
  m.Input("kz", {});
  testing::IntsFrom(m, "kz", "k_rt", -3, 3);
  m.Node("Trilu", {"x", "k_rt"}, {"upper_rt"});
  m.Node("Trilu", {"x", "k_rt"}, {"lower_rt"}).Int("upper", 0);
  m.Input("sq", {4, 6});
  m.Node("EyeLike", {"sq"}, {"eye"}).Int("k", 1);
  m.Node("Add", {"sq", "eye"}, {"plus_eye"});
  for (const char* o : {"oh_last", "oh_first", "oh_mid", "hm_last", "hm_mid", "upper", "lower", "upper_k", "upper_rt",
                        "lower_rt", "lower_k", "plus_eye"})
    m.Output(o);
  const auto r = ConvertModel(m);
  EXPECT_TRUE(r.proven) << r.RenderText();
}

}  // namespace
}  // namespace gpuclean
