// ctest-labels: litert
// CAST against LiteRT.js, special values included:
//  float32 -> int32 (truncation toward zero, saturation, NaN -> INT32_MAX),
//  float32 -> uint8 (clamped, NaN -> 0), float32 <-> bool, int32 <-> bool,
//  int32 -> float32 (rounding above 2^24), int32 -> uint8 (wraps), uint8 ->
//  float32/int32, float32 -> float16 -> float32 (round to nearest even,
//  overflow to inf), float32 -> int16 (clamped), and in-range round trips
//  through int64, int8, float64. Bool and int64 live inside the graph.
// CastOptions.in_data_type is ignored, as LiteRT ignores it. All in one graph.
// On ours: saturation of the casts LiteRT leaves undefined, bool output,
// float16 and bfloat16 by hand, unsupported types.
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

const std::vector<float> kSpecialCast = {-2.7f,    -2.5f, -0.5f,    0.5f,      1.5f,     2.5f,      2.7f,    3e9f,
                                         -3e9f,    NAN,   INFINITY, -INFINITY, 255.5f,   256.0f,    -1.0f,   65504.0f,
                                         65520.0f, 1e-8f, 1e5f,     -0.0f,     32767.5f, -40000.0f, 4097.0f, 2049.0f};
const std::vector<int32_t> kSpecialInts = {
    -2147483647 - 1, 2147483647, 16777217, -16777217, 300, -1, 0, 255, 256, 65519};

TEST(Cast, MatchesLiteRt) {
  CaseGraph g;
  GraphBuilder& b = g.b();
  const int32_t n = static_cast<int32_t>(kSpecialCast.size());
  const int32_t m = static_cast<int32_t>(kSpecialInts.size());
  const int f = g.Input(F32({n}, kSpecialCast));
  const int i = g.Input(I32({m}, kSpecialInts));
  const int u = g.Input(U8({6}, {0, 1, 2, 127, 128, 255}));
  g.Output(b.Cast(f, kI32));
  g.Output(b.Cast(f, kU8));
  g.Output(b.Cast(b.Cast(f, kBool), kF32));
  g.Output(b.Cast(b.Cast(f, kBool), kI32));
  g.Output(b.Cast(b.Cast(f, tfl::TensorType_FLOAT16), kF32));
  g.Output(b.Cast(b.Cast(f, tfl::TensorType_INT16), kF32));
  g.Output(b.Cast(b.Cast(f, tfl::TensorType_FLOAT64), kF32));
  g.Output(b.Cast(i, kF32));
  g.Output(b.Cast(i, kU8));
  g.Output(b.Cast(b.Cast(i, kBool), kI32));
  g.Output(b.Cast(b.Cast(i, kBool), kF32));
  g.Output(b.Cast(b.Cast(i, kI64), kI32));
  g.Output(b.Cast(b.Cast(i, tfl::TensorType_FLOAT16), kF32));
  g.Output(b.Cast(u, kF32));
  g.Output(b.Cast(u, kI32));
  g.Output(b.Cast(b.Cast(u, kBool), kU8));

  // In-range values through int64, int8 and float16, over several shapes.
  for (const auto& [shape, lo, hi] : std::vector<std::tuple<Shape, float, float>>{
           {{3, 5, 7}, -100.0f, 100.0f}, {{}, -7.9f, -7.8f}, {{2, 100003}, -120.0f, 120.0f}}) {
    const int x = g.Input(RandomF32(shape, 4900, lo, hi));
    g.Output(b.Cast(x, kI32));
    g.Output(b.Cast(b.Cast(x, kI64), kF32));
    g.Output(b.Cast(b.Cast(x, tfl::TensorType_INT8), kF32));
    g.Output(b.Cast(b.Cast(x, tfl::TensorType_FLOAT16), kF32));
  }

  // LiteRT reads the source type from the input tensor; a stale
  // CastOptions.in_data_type must not change the result.
  tfl::CastOptionsT o;
  o.in_data_type = kI32;
  o.out_data_type = kI32;
  g.Output(b.Op(tfl::BuiltinOperator_CAST, {g.Input(F32({3}, {1.9f, -1.9f, 7.0f}))}, builder::Options(o))[0]);
  g.ExpectMatches();
}

TEST(Cast, SaturationWhereLiteRtIsUndefined) {
  GraphBuilder b;
  const int f = b.Input("f", kF32, {6});
  b.Output(b.Cast(f, kI64));
  b.Output(b.Cast(f, tfl::TensorType_INT8));
  b.Output(b.Cast(f, tfl::TensorType_UINT16));
  b.Output(b.Cast(f, kBool));
  const auto out = RunOurs(b.Finish(), {F32({6}, {NAN, INFINITY, -INFINITY, 1e20f, -200.0f, -1.5f})});
  const int64_t i64max = std::numeric_limits<int64_t>::max(), i64min = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(ValuesOf<int64_t>(out[0]), (std::vector<int64_t>{0, i64max, i64min, i64max, -200, -1}));
  EXPECT_EQ(ValuesOf<int8_t>(out[1]), (std::vector<int8_t>{0, 127, -128, 127, -128, -1}));
  EXPECT_EQ(ValuesOf<uint16_t>(out[2]), (std::vector<uint16_t>{0, 65535, 0, 65535, 0, 0}));
  ASSERT_EQ(out[3].dtype, kBool);
  EXPECT_EQ(ValuesOf<uint8_t>(out[3]), (std::vector<uint8_t>{1, 1, 1, 1, 1, 1}));
}

TEST(Cast, HalfAndBFloat16) {
  GraphBuilder b;
  const int f = b.Input("f", kF32, {6});
  const int h = b.Cast(f, tfl::TensorType_FLOAT16);
  const int bf = b.Cast(f, tfl::TensorType_BFLOAT16);
  b.Output(b.Cast(h, kF32));
  b.Output(b.Cast(bf, kF32));
  b.Output(b.Cast(h, kI32));
  b.Output(b.Cast(bf, tfl::TensorType_FLOAT16));
  const auto out =
      RunOurs(b.Finish(), {F32({6}, {1.0f + 1.0f / 2048, 65520.0f, -2.5f, NAN, 1.0f + 1.0f / 256, 3e38f})});
  ExpectFloatsNear(ValuesOf<float>(out[0]), {1.0f, INFINITY, -2.5f, NAN, 1.00390625f, INFINITY});
  ExpectFloatsNear(ValuesOf<float>(out[1]), {1.0f, 65536.0f, -2.5f, NAN, 1.0f, 3.00405527e38f});
  EXPECT_EQ(ValuesOf<int32_t>(out[2]), (std::vector<int32_t>{1, 2147483647, -2, 0, 1, 2147483647}));
  const auto halves = ValuesOf<uint16_t>(out[3]);
  EXPECT_EQ(halves[0], 0x3C00);  // 1.0
  EXPECT_EQ(halves[1], 0x7C00);  // 65536 overflows half
}

TEST(Cast, RejectsUnsupportedTypes) {
  GraphBuilder b;
  const int f = b.Input("f", kF32, {3});
  b.Output(b.Cast(b.Cast(f, tfl::TensorType_COMPLEX64), kF32));
  ExpectInterpreterRefuses(b.Finish());
}

}  // namespace
}  // namespace gpuclean::testing::ewt
