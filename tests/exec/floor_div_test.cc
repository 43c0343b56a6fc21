// FLOOR_DIV against LiteRT.js: float32 and int32 with both signs over
// broadcasting up to rank 4; quotients LiteRT computes in double
// (floor_div(1, 0.1f) = 9 where floorf(1.0f / 0.1f) = 10); a zero divisor
// fails on both sides, float or int.
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

int FloorDiv(GraphBuilder& b, int x, int y) { return b.FloorDiv(x, y); }

InputMaker NonZeroInts(int32_t lo, int32_t hi) {
  return [lo, hi](const Shape& s, uint32_t seed) {
    npy::Array a = RandomI32(s, seed, lo, hi);
    for (int64_t k = 0; k < a.num_elements(); ++k)
      if (a.as<int32_t>()[k] == 0) a.as<int32_t>()[k] = -1;
    return a;
  };
}

TEST(FloorDiv, Float32Broadcasting) {
  ExpectBinaryMatches(BroadcastPairs(), kF32, FloorDiv, Uniform(-20, 20), SignedAway(0.3f, 5.0f), 1400);
}

TEST(FloorDiv, Float32QuotientInDouble) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {6});
  const int y = b.Input("y", kF32, {6});
  b.Output(b.FloorDiv(x, y));
  const std::vector<npy::Array> inputs = {F32({6}, {1.0f, 3.0f, -1.0f, 0.7f, -7.0f, INFINITY}),
                                          F32({6}, {0.1f, 0.1f, 0.1f, 0.1f, 2.0f, 2.0f})};
  const ir::Model model = b.Finish();
  ExpectMatchesLiteRt(model, inputs);
  const std::vector<float> got = ValuesOf<float>(RunOurs(model, inputs)[0]);
  EXPECT_EQ(got[0], 9.0f);  // 1 / 0.1000000015 = 9.99999985
  EXPECT_EQ(got[4], -4.0f);
}

TEST(FloorDiv, Int32) {
  ExpectBinaryMatches(BroadcastPairs(), kI32, FloorDiv, Ints(-1000, 1000), NonZeroInts(-9, 9), 1500);
  GraphBuilder b;
  const int i = b.Input("i", kI32, {8});
  const int j = b.Input("j", kI32, {8});
  b.Output(b.FloorDiv(i, j));
  const ir::Model model = b.Finish();
  const std::vector<npy::Array> inputs = {I32({8}, {-7, 7, -7, 7, 0, 5, -1, 9}), I32({8}, {2, 2, -2, -2, 3, 5, 3, -4})};
  EXPECT_EQ(ValuesOf<int32_t>(RunOurs(model, inputs)[0]), (std::vector<int32_t>{-4, 3, 3, -4, 0, 1, -1, -3}));
}

TEST(FloorDiv, ZeroDivisorFails) {
  for (ir::DType dtype : {kF32, kI32}) {
    GraphBuilder b;
    const int x = b.Input("x", dtype, {3});
    const int y = b.Input("y", dtype, {3});
    b.Output(b.FloorDiv(x, y));
    const ir::Model model = b.Finish();
    const std::vector<npy::Array> inputs =
        dtype == kF32 ? std::vector<npy::Array>{F32({3}, {1, 2, 3}), F32({3}, {1, -0.0f, 1})}
                      : std::vector<npy::Array>{I32({3}, {1, 2, 3}), I32({3}, {1, 0, 1})};
    ExpectInvokeFails(model, inputs, "division by 0");
    ExpectLiteRtFails(model, inputs);
  }
}

}  // namespace
}  // namespace gpuclean::testing::ewt
