// ctest-labels: unit
// The elementwise runs (elementwise_util.h) compiled for AVX-512 give the
// bits of the baseline build's: binary ops same-shape, against a row and
// against a scalar; a comparison; SELECT_V2; unary maps; odd lengths that
// end in a partial block; NaN, infinities and -0 among the values.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "exec/conv_test_util.h"
#include "gpuclean/builder.h"
#include "support/arrays.h"
#include "support/conformance.h"

namespace gpuclean::testing::elementwise_isa {
namespace {

using builder::GraphBuilder;

TEST(ElementwiseIsa, AvxFiveTwelveRunsGiveTheBaselineBits) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {5, 37});
  const int y = b.Input("y", tfl::TensorType_FLOAT32, {5, 37});
  const int row = b.Input("row", tfl::TensorType_FLOAT32, {37});
  const int scalar = b.ConstF32("three", {}, {3.0f});
  b.Output(b.Add(x, y));
  b.Output(b.Sub(x, row));
  b.Output(b.Mul(row, x, tfl::ActivationFunctionType_RELU6));
  b.Output(b.Div(x, scalar));
  b.Output(b.Div(scalar, y));
  b.Output(b.Maximum(x, y));
  b.Output(b.Minimum(x, row));
  b.Output(b.SquaredDifference(x, y));
  b.Output(b.Cast(b.Less(x, y), tfl::TensorType_FLOAT32));
  b.Output(b.SelectV2(b.Greater(x, row), x, y));
  b.Output(b.Abs(x));
  b.Output(b.Round(y));
  b.Output(b.Sqrt(y));
  const ir::Model model = b.Finish();
  std::vector<float> xs = ValuesOf<float>(RandomF32(std::vector<int>{5, 37}, 70, -50.0f, 50.0f));
  xs[0] = std::numeric_limits<float>::quiet_NaN(), xs[1] = std::numeric_limits<float>::infinity();
  xs[2] = -std::numeric_limits<float>::infinity(), xs[3] = -0.0f, xs[40] = 2.5f;
  std::vector<float> ys = ValuesOf<float>(RandomF32(std::vector<int>{5, 37}, 71, -50.0f, 50.0f));
  ys[0] = 0.0f, ys[5] = -0.0f, ys[6] = -2.5f;
  const std::vector<npy::Array> inputs = {F32(std::vector<int>{5, 37}, xs), F32(std::vector<int>{5, 37}, ys),
                                          RandomF32(std::vector<int>{37}, 72, -5.0f, 5.0f)};
  convt::ExpectEveryIsaGivesTheGenericBits(model, inputs);
}

}  // namespace
}  // namespace gpuclean::testing::elementwise_isa
