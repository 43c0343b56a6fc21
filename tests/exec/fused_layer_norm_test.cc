// ctest-labels: litert
// A LayerNorm as converters write it, MEAN / SUB / square / MEAN / ADD eps /
// RSQRT / MUL, runs in fp32 as one pass per row at its normalizing MUL. The
// bits are those of the seven ops (MUL or SQUARE for the square, either
// operand order of the ADD and the MUL, rows of whole and partial 8-lane
// blocks, a one-row tensor, the MUL's fused activation), and LiteRT's
// values; a tapped run still sees the variance; a variance read elsewhere,
// a clamping internal op, another numeric mode, or
// InterpreterOptions::fuse_layer_norms off keeps the seven ops.
#include <gtest/gtest.h>

#include <cmath>

#include "gpuclean/builder.h"
#include "gpuclean/exec.h"
#include "support/arrays.h"
#include "support/conformance.h"

namespace gpuclean::testing::fused_layer_norm {
namespace {

using builder::GraphBuilder;
constexpr ir::DType kF32 = tfl::TensorType_FLOAT32;

struct Variant {
  std::vector<int32_t> shape;
  bool square_op = false;          // SQUARE(d), else MUL(d, d)
  bool swapped = false;            // ADD(eps, v) and MUL(r, d)
  bool relu = false;               // RELU fused into the normalizing MUL
  bool variance_output = false;    // v is also a graph output
  bool clamping_internal = false;  // the SUB carries a RELU6
};

struct LayerNormGraph {
  ir::Model model;
  int variance = -1;
  npy::Array input;
};

LayerNormGraph Build(const Variant& v, uint32_t seed) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, v.shape);
  const int32_t last = static_cast<int32_t>(v.shape.size()) - 1;
  const int mu = b.Mean(x, {last}, true);
  const int d =
      b.Sub(x, mu, v.clamping_internal ? tfl::ActivationFunctionType_RELU6 : tfl::ActivationFunctionType_NONE);
  const int s = v.square_op ? b.Square(d) : b.Mul(d, d);
  LayerNormGraph g;
  g.variance = b.Mean(s, {last}, true);
  const int eps = b.ConstF32("eps", {}, {1e-5f});
  const int e = v.swapped ? b.Add(eps, g.variance) : b.Add(g.variance, eps);
  const int r = b.Rsqrt(e);
  const auto act = v.relu ? tfl::ActivationFunctionType_RELU : tfl::ActivationFunctionType_NONE;
  b.Output(v.swapped ? b.Mul(r, d, act) : b.Mul(d, r, act));
  if (v.variance_output) b.Output(g.variance);
  g.model = b.Finish();
  std::vector<int> dims(v.shape.begin(), v.shape.end());
  std::vector<float> values = ValuesOf<float>(RandomF32(dims, seed, -300.0f, 300.0f));
  values[0] = 1e30f;  // a row whose square overflows to infinity
  g.input = F32(dims, values);
  return g;
}

int Skipped(const ir::Model& model, exec::Precision precision = exec::Precision::kFp32) {
  return exec::Interpreter(std::make_shared<const ir::Model>(model), {.precision = precision}).ops_skipped();
}

TEST(FusedLayerNorm, OnePassGivesTheBitsOfTheSevenOps) {
  const std::vector<Variant> variants = {
      {.shape = {196, 1, 64}},                               // whole 8-lane blocks
      {.shape = {5, 37}, .square_op = true},                 // a partial last block
      {.shape = {2, 3, 13}, .swapped = true, .relu = true},  // operands swapped, a RELU on the result
      {.shape = {1, 1, 20}},                                 // one row: the MEAN's sum as it is
      {.shape = {7, 5}},                                     // rows shorter than a block
  };
  uint32_t seed = 31;
  for (const Variant& v : variants) {
    SCOPED_TRACE(ir::FormatShape(v.shape));
    const LayerNormGraph fused = Build(v, seed);
    Variant kept = v;
    kept.variance_output = true;  // the same graph, its ops all run
    const LayerNormGraph apart = Build(kept, seed++);
    ASSERT_EQ(Skipped(fused.model), 6);
    ASSERT_EQ(Skipped(apart.model), 0);
    const auto a = RunOurs(fused.model, {fused.input});
    const auto b = RunOurs(apart.model, {apart.input});
    ExpectArrayNear(a.at(0), b.at(0));
    ExpectThreadsAgree(fused.model, {fused.input});
  }
  const LayerNormGraph g = Build({.shape = {6, 40}}, 40);
  std::vector<float> finite = ValuesOf<float>(g.input);
  finite[0] = 3.0f;
  ExpectMatchesLiteRt(g.model, {F32(std::vector<int>{6, 40}, finite)});
}

TEST(FusedLayerNorm, ATappedRunSeesTheVariance) {
  const LayerNormGraph g = Build({.shape = {4, 24}}, 50);
  exec::Interpreter it(std::make_shared<const ir::Model>(g.model));
  it.SetInput(0, g.input);
  std::vector<float> variance;
  it.Invoke([&](int, int tensor, const exec::Tensor& v) {
    if (tensor == g.variance) variance.assign(v.as<float>(), v.as<float>() + v.num_elements());
  });
  ASSERT_EQ(variance.size(), 4u);
  EXPECT_TRUE(std::isinf(variance[0]));  // the row holding 1e30
  EXPECT_GT(variance[1], 100.0f);
}

TEST(FusedLayerNorm, AClampingInternalOpAnotherModeOrTheOptionOffKeepsTheSevenOps) {
  EXPECT_EQ(Skipped(Build({.shape = {4, 24}, .clamping_internal = true}, 60).model), 0);
  const ir::Model plain = Build({.shape = {4, 24}}, 61).model;
  for (exec::Precision p : {exec::Precision::kFp16Storage, exec::Precision::kFp16Compute, exec::Precision::kFp16Fused})
    EXPECT_EQ(Skipped(plain, p), 0) << exec::PrecisionName(p);
  // Asked not to (convert's range check reads the squares), fp32 keeps them too.
  EXPECT_EQ(exec::Interpreter(std::make_shared<const ir::Model>(plain), {.fuse_layer_norms = false}).ops_skipped(), 0);
}

}  // namespace
}  // namespace gpuclean::testing::fused_layer_norm
