// ctest-labels: litert
// CUMSUM against LiteRT.js: every axis (negative too), exclusive and reverse
// in all combinations, int32 data.
#include "exec/shape_test_util.h"

namespace gpuclean::testing {
namespace {

TEST(Cumsum, AxesAndModes) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {3, 5, 4});
  const int i = b.Input("i", tfl::TensorType_INT32, {4, 6});
  for (bool exclusive : {false, true})
    for (bool reverse : {false, true}) {
      b.Output(b.Cumsum(x, 1, exclusive, reverse));
      b.Output(b.Cumsum(i, -1, exclusive, reverse));
    }
  b.Output(b.Cumsum(x, 0));
  b.Output(b.Cumsum(x, -1, true));
  const ir::Model model = b.Finish();
  const std::vector<npy::Array> inputs = {RandomF32({3, 5, 4}, 271), RandomI32({4, 6}, 272, -50, 50)};
  ExpectMatchesLiteRt(model, inputs);
  ExpectThreadsAgree(model, inputs);
}

TEST(Cumsum, HandComputed) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {4});
  b.Output(b.Cumsum(x, 0, false, false));
  b.Output(b.Cumsum(x, 0, true, false));
  b.Output(b.Cumsum(x, 0, false, true));
  b.Output(b.Cumsum(x, 0, true, true));
  const auto out = RunOurs(b.Finish(), {F32({4}, {1, 2, 3, 4})});
  EXPECT_EQ(ValuesOf<float>(out[0]), (std::vector<float>{1, 3, 6, 10}));
  EXPECT_EQ(ValuesOf<float>(out[1]), (std::vector<float>{0, 1, 3, 6}));
  EXPECT_EQ(ValuesOf<float>(out[2]), (std::vector<float>{10, 9, 7, 4}));
  EXPECT_EQ(ValuesOf<float>(out[3]), (std::vector<float>{9, 7, 4, 0}));
}

}  // namespace
}  // namespace gpuclean::testing
