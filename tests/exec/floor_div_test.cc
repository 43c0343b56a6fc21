// ctest-labels: litert
// FLOOR_DIV against LiteRT.js, all cases in one graph: float32 and int32 with
// both signs over broadcasting up to rank 6, and quotients LiteRT computes in
// double (floor_div(1, 0.1f) = 9 where floorf(1.0f / 0.1f) = 10). A zero
// divisor fails on both sides, float or int.
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

int OpFloorDiv(GraphBuilder& b, int x, int y) { return b.FloorDiv(x, y); }

InputMaker NonZeroIntsFloorDiv(int32_t lo, int32_t hi) {
  return [lo, hi](const Shape& s, uint32_t seed) {
    npy::Array a = RandomI32(s, seed, lo, hi);
    for (int64_t k = 0; k < a.num_elements(); ++k)
      if (a.as<int32_t>()[k] == 0) a.as<int32_t>()[k] = -1;
    return a;
  };
}

const std::vector<float> kNumFloorDiv = {1.0f, 3.0f, -1.0f, 0.7f, -7.0f, INFINITY};
const std::vector<float> kDenFloorDiv = {0.1f, 0.1f, 0.1f, 0.1f, 2.0f, 2.0f};
const std::vector<int32_t> kINum = {-7, 7, -7, 7, 0, 5, -1, 9};
const std::vector<int32_t> kIDen = {2, 2, -2, -2, 3, 5, 3, -4};

TEST(FloorDiv, MatchesLiteRt) {
  CaseGraph g;
  g.AddBinary(BroadcastPairs(), OpFloorDiv, Uniform(-20, 20), SignedAway(0.3f, 5.0f), 1400);
  g.AddBinary(BroadcastPairs(), OpFloorDiv, Ints(-1000, 1000), NonZeroIntsFloorDiv(-9, 9), 1500);
  g.Output(OpFloorDiv(g.b(), g.Input(F32({6}, kNumFloorDiv)), g.Input(F32({6}, kDenFloorDiv))));
  g.Output(OpFloorDiv(g.b(), g.Input(I32({8}, kINum)), g.Input(I32({8}, kIDen))));
  g.ExpectMatches();
}

TEST(FloorDiv, HandComputed) {
  GraphBuilder b;
  const int in_x = b.Input("x", kF32, {6});
  const int in_y = b.Input("y", kF32, {6});
  b.Output(OpFloorDiv(b, in_x, in_y));
  const int in_i = b.Input("i", kI32, {8});
  const int in_j = b.Input("j", kI32, {8});
  b.Output(OpFloorDiv(b, in_i, in_j));
  const auto out =
      RunOurs(b.Finish(), {F32({6}, kNumFloorDiv), F32({6}, kDenFloorDiv), I32({8}, kINum), I32({8}, kIDen)});
  const std::vector<float> f = ValuesOf<float>(out[0]);
  EXPECT_EQ(f[0], 9.0f);  // 1 / 0.1000000015 = 9.99999985
  EXPECT_EQ(f[4], -4.0f);
  EXPECT_EQ(ValuesOf<int32_t>(out[1]), (std::vector<int32_t>{-4, 3, 3, -4, 0, 1, -1, -3}));
}

TEST(FloorDiv, ZeroDivisorFails) {
  for (ir::DType dtype : {kF32, kI32}) {
    GraphBuilder b;
    const int in_x = b.Input("x", dtype, {3});
    const int in_y = b.Input("y", dtype, {3});
    b.Output(OpFloorDiv(b, in_x, in_y));
    const ir::Model model = b.Finish();
    const std::vector<npy::Array> inputs = dtype == kF32
                                               ? std::vector<npy::Array>{F32({3}, {1, 2, 3}), F32({3}, {1, -0.0f, 1})}
                                               : std::vector<npy::Array>{I32({3}, {1, 2, 3}), I32({3}, {1, 0, 1})};
    ExpectInvokeFails(model, inputs, "division by 0");
    ExpectLiteRtFails(model, inputs);
  }
}

}  // namespace
}  // namespace gpuclean::testing::ewt
