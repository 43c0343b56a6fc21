// ctest-labels: litert
#include "gpuclean/builder.h"
#include "gpuclean/synth.h"
#include "rewrite/pass_proof.h"
#include "support/arrays.h"
#include "support/tflite_names.h"

namespace gpuclean::rewrite {
namespace {

using builder::GraphBuilder;
using ::gpuclean::testing::tflite_names::F32;

npy::Array InputStridedSliceToAvgpool(const builder::Shape& shape, uint32_t seed) {
  return synth::HashUniform(std::vector<int64_t>(shape.begin(), shape.end()), -4, 4, seed);
}

ir::Model Subsample(const builder::Shape& shape, const std::vector<int32_t>& begin, const std::vector<int32_t>& end,
                    const std::vector<int32_t>& strides, const builder::StridedSliceMasks& masks = {}) {
  GraphBuilder b;
  int x = b.Input("x", F32, shape);
  b.Output(b.StridedSlice(x, begin, end, strides, masks));
  return b.Finish();
}

size_t SitesStridedSliceToAvgpool(ir::Model model) {
  return FindPass("strided-slice-to-avgpool")->Apply(model, {}).sites.size();
}

TEST(StridedSliceToAvgPool, Stride2OfHeightAndWidthIsAOneByOnePool) {
  const ir::Model model = Subsample({1, 8, 6, 3}, {0, 0, 0, 0}, {1, 8, 6, 3}, {1, 2, 2, 1});
  const testing::PassProof proof =
      testing::ExpectPassProven("strided-slice-to-avgpool", model, {InputStridedSliceToAvgpool({1, 8, 6, 3}, 1)});
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_STRIDED_SLICE), 0);
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_AVERAGE_POOL_2D), 1);
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_SLICE), 0);
}

TEST(StridedSliceToAvgPool, OffsetsOddSizesAndMasks) {
  struct Case {
    const char* name;
    builder::Shape shape;
    std::vector<int32_t> begin, end, strides;
    builder::StridedSliceMasks masks;
  };
  const Case cases[] = {
      // Odd rows from 1, every third column up to the last one (excluded).
      {"offsets", {2, 7, 9, 2}, {0, 1, 0, 0}, {2, 7, -1, 2}, {1, 2, 3, 1}, {}},
      // Everything from the masks, stride 2 on height only.
      {"masks", {1, 5, 4, 3}, {0, 0, 0, 0}, {0, 0, 0, 0}, {1, 2, 1, 1}, {.begin = 15, .end = 15}},
      // Ends past the tensor are clamped; the last window starts at row 4.
      {"clamped", {1, 5, 5, 1}, {0, 0, 1, 0}, {1, 100, 100, 1}, {1, 4, 2, 1}, {}},
  };
  uint32_t seed = 10;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const ir::Model model = Subsample(c.shape, c.begin, c.end, c.strides, c.masks);
    const testing::PassProof proof =
        testing::ExpectPassProven("strided-slice-to-avgpool", model, {InputStridedSliceToAvgpool(c.shape, seed++)});
    EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_STRIDED_SLICE), 0);
    EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_AVERAGE_POOL_2D), 1);
  }
}

TEST(StridedSliceToAvgPool, RegularGatherNdOfHeightAndWidthIsAPool) {
  // indices [1, 3, 2, 3]: (0, 2h + 1, 2w) for h < 3, w < 2, over x [1, 6, 4, 5].
  std::vector<int32_t> idx;
  for (int h = 0; h < 3; ++h)
    for (int w = 0; w < 2; ++w) idx.insert(idx.end(), {0, 2 * h + 1, 2 * w});
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 6, 4, 5});
  b.Output(b.GatherNd(x, b.ConstI32("i", {1, 3, 2, 3}, idx)));
  const ir::Model model = b.Finish();
  const testing::PassProof proof =
      testing::ExpectPassProven("strided-slice-to-avgpool", model, {InputStridedSliceToAvgpool({1, 6, 4, 5}, 20)});
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_GATHER_ND), 0);
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_AVERAGE_POOL_2D), 1);
  testing::ExpectFindingGone(model, proof.rewritten, "gather-nd");
}

TEST(StridedSliceToAvgPool, FixesTheGatherNdRowsProbe) {
  // Rows 0 and 2 of a 2-D tensor: no pool applies, a STRIDED_SLICE does.
  const ir::Model model = synth::Build("gather-nd-rows");
  const testing::PassProof proof =
      testing::ExpectPassProven("strided-slice-to-avgpool", model, {InputStridedSliceToAvgpool({4, 8}, 21)});
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_GATHER_ND), 0);
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_STRIDED_SLICE), 1);
  testing::ExpectFindingGone(model, proof.rewritten, "gather-nd");
}

TEST(StridedSliceToAvgPool, LeavesOtherSlicesAndIrregularGathersAlone) {
  // Stride on channels, a shrunk axis, stride 1 everywhere.
  EXPECT_EQ(SitesStridedSliceToAvgpool(Subsample({1, 4, 4, 4}, {0, 0, 0, 0}, {1, 4, 4, 4}, {1, 1, 1, 2})), 0u);
  EXPECT_EQ(
      SitesStridedSliceToAvgpool(Subsample({1, 4, 4, 4}, {0, 0, 0, 0}, {1, 4, 4, 4}, {1, 2, 2, 1}, {.shrink_axis = 1})),
      0u);
  EXPECT_EQ(SitesStridedSliceToAvgpool(Subsample({1, 4, 4, 4}, {0, 1, 0, 0}, {1, 4, 4, 4}, {1, 1, 1, 1})), 0u);
  // A subsample of an int32 tensor: no pool takes it.
  {
    GraphBuilder b;
    int x = b.Input("x", tfl::TensorType_INT32, {1, 4, 4, 2});
    b.Output(b.StridedSlice(x, {0, 0, 0, 0}, {1, 4, 4, 2}, {1, 2, 2, 1}));
    EXPECT_EQ(SitesStridedSliceToAvgpool(b.Finish()), 0u);
  }
  // Rows 0, 1, 3: not one stride.
  GraphBuilder b;
  int x = b.Input("x", F32, {4, 8});
  b.Output(b.GatherNd(x, b.ConstI32("i", {3, 1}, {0, 1, 3})));
  ir::Model model = b.Finish();
  EXPECT_EQ(SitesStridedSliceToAvgpool(model), 0u);
  EXPECT_EQ(testing::CountOps(model, tfl::BuiltinOperator_GATHER_ND), 1);
}

}  // namespace
}  // namespace gpuclean::rewrite
