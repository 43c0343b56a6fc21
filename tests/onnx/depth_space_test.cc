// ctest-labels: litert
// DepthToSpace (DCR, CRD) and SpaceToDepth, proven against onnxruntime.
#include <gtest/gtest.h>

#include "onnx/op_test_util.h"

namespace gpuclean {
namespace {

using testing::ConvertModel;
using testing::CountOp;
using testing::OnnxTestModel;

TEST(DepthSpace, BothModesAndTheInverse) {
  OnnxTestModel m;
  m.Input("x", {2, 12, 3, 4});
  m.Node("DepthToSpace", {"x"}, {"dcr"}).Int("blocksize", 2).Str("mode", "DCR");
  m.Node("DepthToSpace", {"x"}, {"crd"}).Int("blocksize", 2).Str("mode", "CRD");
  m.Node("DepthToSpace", {"x"}, {"default"}).Int("blocksize", 2);
  m.Input("z", {1, 3, 6, 9});
  m.Node("SpaceToDepth", {"z"}, {"s2d"}).Int("blocksize", 3);
  m.Node("SpaceToDepth", {"dcr"}, {"roundtrip"}).Int("blocksize", 2);
  for (const char* o : {"dcr", "crd", "default", "s2d", "roundtrip"}) m.Output(o);
  const auto r = ConvertModel(m);
  ASSERT_TRUE(r.proven) << r.RenderText();
  EXPECT_EQ(CountOp(r, "DEPTH_TO_SPACE"), 3);
  EXPECT_EQ(CountOp(r, "SPACE_TO_DEPTH"), 2);
}

}  // namespace
}  // namespace gpuclean
