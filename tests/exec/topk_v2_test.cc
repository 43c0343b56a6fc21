// ctest-labels: litert
// TOPK_V2 against LiteRT.js: k from 1 to the whole row, ranks 1 to 3, exact
// ties (lower index first), int32 values.
#include "exec/shape_test_util.h"

namespace gpuclean::testing {
namespace {

TEST(TopKV2, KAndRanks) {
  GraphBuilder b;
  const int v = b.Input("v", tfl::TensorType_FLOAT32, {9});
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {3, 4, 17});
  for (auto [values, indices] : {b.TopKV2(v, 1), b.TopKV2(v, 9), b.TopKV2(x, 5), b.TopKV2(x, 17)}) {
    b.Output(values);
    b.Output(indices);
  }
  const ir::Model model = b.Finish();
  const std::vector<npy::Array> inputs = {RandomF32({9}, 251), RandomF32({3, 4, 17}, 252)};
  ExpectMatchesLiteRt(model, inputs);
  ExpectThreadsAgree(model, inputs);
}

TEST(TopKV2, TiesKeepLowerIndexFirst) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {6, 12});
  const int i = b.Input("i", tfl::TensorType_INT32, {2, 10});
  for (auto [values, indices] : {b.TopKV2(x, 4), b.TopKV2(x, 12), b.TopKV2(i, 6)}) {
    b.Output(values);
    b.Output(indices);
  }
  const ir::Model model = b.Finish();
  const std::vector<npy::Array> inputs = {TiedF32({6, 12}, 253, -2, 2), RandomI32({2, 10}, 254, 0, 3)};
  ExpectMatchesLiteRt(model, inputs);
  GraphBuilder h;
  const int y = h.Input("y", tfl::TensorType_FLOAT32, {6});
  auto [values, indices] = h.TopKV2(y, 4);
  h.Output(values);
  h.Output(indices);
  const auto out = RunOurs(h.Finish(), {F32({6}, {1, 3, 2, 3, 1, 3})});
  EXPECT_EQ(ValuesOf<float>(out[0]), (std::vector<float>{3, 3, 3, 2}));
  EXPECT_EQ(ValuesOf<int32_t>(out[1]), (std::vector<int32_t>{1, 3, 5, 2}));
}

}  // namespace
}  // namespace gpuclean::testing
