// ctest-labels: litert
// GATHER_ND against LiteRT.js: index depths 1 to rank, batched index
// shapes, int32 params; out-of-range indices are an error.
#include "exec/shape_test_util.h"

namespace gpuclean::testing {
namespace {

TEST(GatherNd, Depths) {
  GraphBuilder b;
  const int p = b.Input("p", tfl::TensorType_FLOAT32, {4, 3, 5});
  const int d1 = b.Input("d1", tfl::TensorType_INT32, {2, 1});
  const int d2 = b.Input("d2", tfl::TensorType_INT32, {3, 2});
  const int d3 = b.Input("d3", tfl::TensorType_INT32, {2, 2, 3});
  b.Output(b.GatherNd(p, d1));
  b.Output(b.GatherNd(p, d2));
  b.Output(b.GatherNd(p, d3));
  const ir::Model model = b.Finish();
  ExpectMatchesLiteRt(model, {RandomF32({4, 3, 5}, 241), I32({2, 1}, {3, 0}), I32({3, 2}, {0, 2, 3, 1, 3, 1}),
                              I32({2, 2, 3}, {0, 0, 0, 3, 2, 4, 1, 1, 1, 2, 0, 3})});
}

TEST(GatherNd, Int32Params) {
  GraphBuilder b;
  const int p = b.Input("p", tfl::TensorType_INT32, {3, 4});
  const int k = b.Input("k", tfl::TensorType_INT32, {4, 2});
  b.Output(b.GatherNd(p, k));
  const ir::Model model = b.Finish();
  const npy::Array params = RandomI32({3, 4}, 242, -99, 99);
  const npy::Array indices = I32({4, 2}, {2, 3, 0, 0, 1, 2, 2, 0});
  ExpectMatchesLiteRt(model, {params, indices});
  const std::vector<int32_t> pv = ValuesOf<int32_t>(params);
  EXPECT_EQ(ValuesOf<int32_t>(RunOurs(model, {params, indices})[0]),
            (std::vector<int32_t>{pv[11], pv[0], pv[6], pv[8]}));
}

TEST(GatherNd, OutOfRangeIndexIsAnError) {
  GraphBuilder b;
  const int p = b.Input("p", tfl::TensorType_FLOAT32, {3, 2});
  const int k = b.Input("k", tfl::TensorType_INT32, {1, 2});
  b.Output(b.GatherNd(p, k));
  EXPECT_THROW(RunOurs(b.Finish(), {RandomF32({3, 2}, 243), I32({1, 2}, {0, 2})}), Error);
}

}  // namespace
}  // namespace gpuclean::testing
