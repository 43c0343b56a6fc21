// ctest-labels: litert
// DEQUANTIZE of constants against LiteRT.js: float16 (incl. subnormal, inf
// and the largest half), int8 per tensor and per channel, uint8 with a zero
// point. The dequantized weight is added to a runtime input so LiteRT.js
// computes the output at invoke time.
#include "exec/shape_test_util.h"

namespace gpuclean::testing {
namespace {

TEST(Dequantize, Float16Constants) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {2, 5});
  const int w =
      b.ConstF16FromF32("w", {2, 5}, {0.1f, -2.5f, 65504.0f, 6e-8f, -1e-5f, 3.14159f, 0.0f, -0.0f, 1000.7f, -0.33333f});
  const int deq = b.Dequantize(w);
  b.Output(b.Add(deq, x));
  const ir::Model model = b.Finish();
  ExpectMatchesLiteRt(model, {RandomF32({2, 5}, 281)});
  // Exact widening of the stored halves (LiteRT.js cannot return a folded
  // constant as a graph output, so this is checked on ours alone).
  GraphBuilder h;
  const int w2 =
      h.ConstF16FromF32("w", {2, 5}, {0.1f, -2.5f, 65504.0f, 6e-8f, -1e-5f, 3.14159f, 0.0f, -0.0f, 1000.7f, -0.33333f});
  h.Output(h.Dequantize(w2));
  const auto out = RunOurs(h.Finish(), {});
  const std::vector<float> got = ValuesOf<float>(out[0]);
  EXPECT_EQ(got[2], 65504.0f);
  EXPECT_EQ(got[1], -2.5f);
  EXPECT_EQ(got[3], 5.9604644775390625e-08f);  // the smallest subnormal half
  EXPECT_TRUE(std::signbit(got[7]));
}

TEST(Dequantize, Int8PerTensorAndPerChannel) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {3, 4});
  std::vector<int8_t> q = {-128, -1, 0, 1, 127, 50, -50, 3, 9, -9, 100, -100};
  const int t = b.ConstInt8("t", {3, 4}, q, 0.0123f, -7);
  const int c0 = b.ConstInt8PerChannel("c0", {3, 4}, q, {0.5f, 0.01f, 2.0f}, 0);
  const int c1 = b.ConstInt8PerChannel("c1", {3, 4}, q, {0.1f, 0.2f, 0.3f, 0.4f}, 1);
  b.Output(b.Add(b.Dequantize(t), x));
  b.Output(b.Add(b.Dequantize(c0), x));
  b.Output(b.Add(b.Dequantize(c1), x));
  const ir::Model model = b.Finish();
  ExpectMatchesLiteRt(model, {RandomF32({3, 4}, 282)});
}

TEST(Dequantize, Uint8WithZeroPoint) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {6});
  const std::vector<uint8_t> q = {0, 1, 127, 128, 200, 255};
  const int w = b.Const("w", tfl::TensorType_UINT8, {6}, Bytes::FromValues(std::span<const uint8_t>(q)));
  b.Output(b.Add(b.Dequantize(w), x));
  ir::Model model = b.Finish();
  model.main().tensors[w].quant.scale = {0.05f};
  model.main().tensors[w].quant.zero_point = {128};
  ExpectMatchesLiteRt(model, {RandomF32({6}, 283)});
  const auto out = RunOurs(model, {F32({6}, {0, 0, 0, 0, 0, 0})});
  EXPECT_EQ(ValuesOf<float>(out[0]),
            (std::vector<float>{0.05f * -128, 0.05f * -127, 0.05f * -1, 0.0f, 0.05f * 72, 0.05f * 127}));
}

}  // namespace
}  // namespace gpuclean::testing
