// ctest-labels: litert
// SiLU as exporters write it, MUL(x, LOGISTIC(x)), runs as one pass in fp32:
// the LOGISTIC is skipped and the MUL computes x * sigmoid(x). The bits are
// those of the two ops (either operand order, with the MUL's fused
// activation), and LiteRT's values; a tapped run still sees the sigmoid;
// a sigmoid read elsewhere, or another mode, keeps the two ops.
#include <gtest/gtest.h>

#include <cmath>

#include "gpuclean/builder.h"
#include "gpuclean/exec.h"
#include "support/arrays.h"
#include "support/conformance.h"

namespace gpuclean::testing::fused_silu {
namespace {

using builder::GraphBuilder;
constexpr ir::DType kF32 = tfl::TensorType_FLOAT32;

struct SiluGraph {
  ir::Model model;
  int sigmoid = -1;
};

// y1 = x * sigmoid(x); y2 = RELU6(sigmoid(x + 1) * (x + 1)); with
// `sigmoid_read_twice`, both sigmoids are graph outputs as well.
SiluGraph Build(bool sigmoid_read_twice) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {3, 37});
  SiluGraph g;
  g.sigmoid = b.Logistic(x);
  b.Output(b.Mul(x, g.sigmoid));
  const int shifted = b.Add(x, b.ConstF32("one", {}, {1.0f}));
  const int s2 = b.Logistic(shifted);
  b.Output(b.Mul(s2, shifted, tfl::ActivationFunctionType_RELU6));
  if (sigmoid_read_twice) {
    b.Output(g.sigmoid);
    b.Output(s2);
  }
  g.model = b.Finish();
  return g;
}

npy::Array Input() {
  std::vector<float> v = ValuesOf<float>(RandomF32(std::vector<int>{3, 37}, 9, -12.0f, 12.0f));
  v[0] = -100.0f, v[1] = 100.0f, v[2] = -0.0f, v[3] = NAN, v[4] = INFINITY, v[5] = -INFINITY;
  return F32(std::vector<int>{3, 37}, v);
}

TEST(FusedSilu, OnePassGivesTheBitsOfTheTwoOps) {
  const SiluGraph fused = Build(false), apart = Build(true);
  ASSERT_EQ(exec::Interpreter(std::make_shared<const ir::Model>(fused.model)).ops_skipped(), 2);
  ASSERT_EQ(exec::Interpreter(std::make_shared<const ir::Model>(apart.model)).ops_skipped(), 0);
  const auto a = RunOurs(fused.model, {Input()});
  const auto b = RunOurs(apart.model, {Input()});
  ExpectArrayNear(a.at(0), b.at(0));
  ExpectArrayNear(a.at(1), b.at(1));
  ExpectThreadsAgree(fused.model, {Input()});
  std::vector<float> finite = ValuesOf<float>(Input());
  finite[3] = 0.25f;  // LiteRT's LOGISTIC of NaN is its own
  ExpectMatchesLiteRt(fused.model, {F32(std::vector<int>{3, 37}, finite)});
}

TEST(FusedSilu, ATappedRunSeesTheSigmoid) {
  const SiluGraph g = Build(false);
  exec::Interpreter it(std::make_shared<const ir::Model>(g.model));
  it.SetInput(0, Input());
  std::vector<float> sigmoid;
  it.Invoke([&](int, int tensor, const exec::Tensor& v) {
    if (tensor == g.sigmoid) sigmoid.assign(v.as<float>(), v.as<float>() + v.num_elements());
  });
  ASSERT_EQ(sigmoid.size(), 3u * 37);
  EXPECT_EQ(sigmoid[0], 1.0f / (1.0f + std::exp(100.0f)));
  EXPECT_EQ(sigmoid[1], 1.0f);
}

TEST(FusedSilu, OtherModesKeepTheTwoOps) {
  const SiluGraph g = Build(false);
  for (exec::Precision p : {exec::Precision::kFp16Storage, exec::Precision::kFp16Compute}) {
    exec::Interpreter it(std::make_shared<const ir::Model>(g.model), {.precision = p});
    EXPECT_EQ(it.ops_skipped(), 0) << exec::PrecisionName(p);
  }
}

}  // namespace
}  // namespace gpuclean::testing::fused_silu
