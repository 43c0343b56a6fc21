// ctest-labels: litert
// A zero PAD whose only reader is a convolution is not run: the convolution
// reads the PAD's input and pads as it convolves (ONNX exports write such a
// PAD wherever their padding is not TFLite's SAME). Values are those of the
// PAD run, in every numeric mode, and LiteRT's; a tapped run still sees the
// PAD's output.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "gpuclean/builder.h"
#include "gpuclean/exec.h"
#include "support/arrays.h"
#include "support/conformance.h"

namespace gpuclean::testing::absorbed_pad {
namespace {

using builder::GraphBuilder;
constexpr ir::DType kF32 = tfl::TensorType_FLOAT32;

struct PadConvGraph {
  ir::Model model;
  int pad_v1 = -1, pad_v2 = -1;  // the PADs' output tensors
};

// x [1,9,8,3] -> PAD (1,0 | 2,1) -> CONV_2D 3x3 stride 2 VALID -> PADV2 zero
// (0,1 | 1,1) -> DEPTHWISE 3x3 SAME; with `pad_read_twice`, each PAD's output
// is a graph output as well, so neither may be skipped.
PadConvGraph Build(bool pad_read_twice, float padv2_value = 0.0f) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {1, 9, 8, 3});
  PadConvGraph g;
  g.pad_v1 = b.Pad(x, {{0, 0}, {1, 0}, {2, 1}, {0, 0}});
  const int w = b.ConstF32("w", {4, 3, 3, 3}, RandomValues(4 * 27, 1));
  const int bias = b.ConstF32("b", {4}, RandomValues(4, 2));
  const int c = b.Conv2D(g.pad_v1, w, bias, tfl::Padding_VALID, 2, 2, tfl::ActivationFunctionType_RELU);
  g.pad_v2 = b.PadV2(c, {{0, 0}, {0, 1}, {1, 1}, {0, 0}}, padv2_value);
  const int dw = b.ConstF32("dw", {1, 3, 3, 8}, RandomValues(72, 3));
  const int dw_bias = b.ConstF32("dw_b", {8}, RandomValues(8, 4));
  b.Output(b.DepthwiseConv2D(g.pad_v2, dw, dw_bias, tfl::Padding_SAME, 1, 1));
  if (pad_read_twice) {
    b.Output(g.pad_v1);
    b.Output(g.pad_v2);
  }
  g.model = b.Finish();
  return g;
}

TEST(AbsorbedPad, TheConvolutionReadsThroughAZeroPadAsLiteRtComputesIt) {
  const PadConvGraph g = Build(false);
  exec::Interpreter it(std::make_shared<const ir::Model>(g.model));
  EXPECT_EQ(it.ops_skipped(), 2);
  const npy::Array x = RandomF32(std::vector<int>{1, 9, 8, 3}, 4);
  ExpectMatchesLiteRt(g.model, {x});
  ExpectThreadsAgree(g.model, {x});
}

// oneDNN orders a padded convolution's sums its own way, so fp32 may differ
// from the PAD run by float rounding, and a half-precision output by the
// one half ulp such a difference can tip; our own kernels give the same bits.
TEST(AbsorbedPad, EveryNumericModeGivesTheValuesOfThePadRun) {
  const PadConvGraph skipped = Build(false), kept = Build(true);
  ASSERT_EQ(exec::Interpreter(std::make_shared<const ir::Model>(kept.model)).ops_skipped(), 0);
  const npy::Array x = RandomF32(std::vector<int>{1, 9, 8, 3}, 5);
  for (exec::Precision p : {exec::Precision::kFp32, exec::Precision::kFp16Storage, exec::Precision::kFp16Compute,
                            exec::Precision::kFp16Fused}) {
    SCOPED_TRACE(std::string(exec::PrecisionName(p)));
    const auto a = RunOurs(skipped.model, {x}, {.precision = p});
    const auto b = RunOurs(kept.model, {x}, {.precision = p});
    ExpectArrayNear(a.at(0), b.at(0), p == exec::Precision::kFp32 ? 1e-6f : 1e-3f);
  }
}

TEST(AbsorbedPad, ATappedRunSeesThePaddedTensor) {
  const PadConvGraph g = Build(false);
  exec::Interpreter it(std::make_shared<const ir::Model>(g.model));
  const npy::Array x = RandomF32(std::vector<int>{1, 9, 8, 3}, 6);
  it.SetInput(0, x);
  std::vector<float> padded;
  it.Invoke([&](int, int tensor, const exec::Tensor& v) {
    if (tensor == g.pad_v1) padded.assign(v.as<float>(), v.as<float>() + v.num_elements());
  });
  ASSERT_EQ(padded.size(), 1u * 10 * 11 * 3);
  const std::vector<float> xs = ValuesOf<float>(x);
  for (int h = 0; h < 10; ++h)
    for (int w = 0; w < 11; ++w)
      for (int c = 0; c < 3; ++c) {
        const bool inside = h >= 1 && w >= 2 && w < 10;
        const float want = inside ? xs[((h - 1) * 8 + (w - 2)) * 3 + c] : 0.0f;
        ASSERT_EQ(padded[(h * 11 + w) * 3 + c], want) << h << "," << w << "," << c;
      }
  // Timing taps see only what an untapped run computes.
  int pads_tapped = 0;
  it.Invoke(
      [&](int op, int, const exec::Tensor&) {
        const auto code = g.model.main().ops[op].code;
        pads_tapped += code == tfl::BuiltinOperator_PAD || code == tfl::BuiltinOperator_PADV2;
      },
      exec::Tapping::kAsUntapped);
  EXPECT_EQ(pads_tapped, 0);
}

// ONNX MaxPool's padding: PADV2 with -FLT_MAX, then a VALID MAX_POOL_2D.
// Such a tap never wins over the pool's running max (it starts at
// -FLT_MAX), so skipping the PAD gives the same bits, -inf inputs and
// windows wholly in the padding included.
ir::Model PaddedMaxPool(float value, bool pad_read_twice = false) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {1, 7, 6, 4});
  const int padded = b.PadV2(x, {{0, 0}, {1, 1}, {3, 0}, {0, 0}}, value);
  b.Output(b.MaxPool2D(padded, tfl::Padding_VALID, 2, 2, 3, 3));
  if (pad_read_twice) b.Output(padded);
  return b.Finish();
}

TEST(AbsorbedPad, AMaxPoolReadsThroughItsLowestValuePadBitForBit) {
  const ir::Model skipped = PaddedMaxPool(std::numeric_limits<float>::lowest());
  ASSERT_EQ(exec::Interpreter(std::make_shared<const ir::Model>(skipped)).ops_skipped(), 1);
  const ir::Model kept = PaddedMaxPool(std::numeric_limits<float>::lowest(), true);
  ASSERT_EQ(exec::Interpreter(std::make_shared<const ir::Model>(kept)).ops_skipped(), 0);
  std::vector<float> values = ValuesOf<float>(RandomF32(std::vector<int>{1, 7, 6, 4}, 8, -3.0f, 3.0f));
  for (int i = 0; i < 24; ++i) values[i] = -INFINITY;  // the first row all -inf
  const npy::Array x = F32(std::vector<int>{1, 7, 6, 4}, values);
  for (exec::Precision p : {exec::Precision::kFp32, exec::Precision::kFp16Storage, exec::Precision::kFp16Compute}) {
    SCOPED_TRACE(std::string(exec::PrecisionName(p)));
    ExpectArrayNear(RunOurs(skipped, {x}, {.precision = p}).at(0), RunOurs(kept, {x}, {.precision = p}).at(0));
  }
  ExpectMatchesLiteRt(skipped, {x});
  EXPECT_EQ(exec::Interpreter(std::make_shared<const ir::Model>(PaddedMaxPool(-INFINITY))).ops_skipped(), 1);
  EXPECT_EQ(exec::Interpreter(std::make_shared<const ir::Model>(PaddedMaxPool(0.0f))).ops_skipped(), 0)
      << "a zero tap can win a max";
}

TEST(AbsorbedPad, APadWithAnotherValueOrAnotherReaderRuns) {
  EXPECT_EQ(exec::Interpreter(std::make_shared<const ir::Model>(Build(false, -1.0f).model)).ops_skipped(), 1);
  EXPECT_EQ(exec::Interpreter(std::make_shared<const ir::Model>(Build(false, -0.0f).model)).ops_skipped(), 1);
  EXPECT_EQ(exec::Interpreter(std::make_shared<const ir::Model>(Build(true).model)).ops_skipped(), 0);
}

}  // namespace
}  // namespace gpuclean::testing::absorbed_pad
