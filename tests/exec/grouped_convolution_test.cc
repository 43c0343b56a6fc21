// ctest-labels: litert
// A grouped convolution as converters write it for runtimes without grouped
// CONV_2D, SPLIT -> one CONV_2D per part -> CONCATENATION, runs as one
// grouped CONV_2D: the SPLIT and the per-part convolutions are skipped. The
// values are LiteRT's and those of the per-part run in every numeric mode; a
// tapped run still sees each part's output; near misses stay apart.
#include <gtest/gtest.h>

#include "gpuclean/builder.h"
#include "gpuclean/exec.h"
#include "support/arrays.h"
#include "support/conformance.h"

namespace gpuclean::testing::grouped_convolution {
namespace {

using builder::GraphBuilder;
constexpr ir::DType kF32 = tfl::TensorType_FLOAT32;
const std::vector<int> kInputShape = {1, 9, 8, 12};

// Where a variant departs from the grouped pattern.
enum class Variant {
  kGrouped,
  kPartReadTwice,     // a split part is also a graph output
  kConcatReordered,   // the outputs concatenated in another order
  kOtherActivation,   // one part's convolution clamps differently
  kUnequalParts,      // SPLIT_V of sizes 4 and 8
  kConvOutputShared,  // a part's convolution output read twice
};

struct GroupedGraph {
  ir::Model model;
  int part_output = -1;  // the second part's convolution output, in the first group
};

int Filter(GraphBuilder& b, const std::string& name, int out, int k, int in, uint32_t seed) {
  return b.ConstF32(name, {out, k, k, in}, RandomValues(out * k * k * in, seed));
}

// x [1,9,8,12] -> PAD (1,1 | 0,1) -> SPLIT 3 ways -> CONV_2D 3x3 stride 2
// VALID, RELU, 5 outputs each -> CONCATENATION; and x -> SPLIT_V [6, 6] ->
// CONV_2D 1x1 SAME without bias -> CONCATENATION (with `concat_clamps`,
// RELU6: left to the per-part run, as LiteRT's kernels disagree on it).
GroupedGraph Build(Variant v = Variant::kGrouped, bool concat_clamps = false) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, kInputShape);
  GroupedGraph g;
  const int padded = b.Pad(x, {{0, 0}, {1, 1}, {0, 1}, {0, 0}});
  const std::vector<int> parts = v == Variant::kUnequalParts ? b.SplitV(padded, {4, 8}, 3) : b.Split(padded, 3, 3);
  std::vector<int> outs;
  for (size_t k = 0; k < parts.size(); ++k) {
    const int in = v == Variant::kUnequalParts ? (k == 0 ? 4 : 8) : 4;
    const auto act =
        v == Variant::kOtherActivation && k == 2 ? tfl::ActivationFunctionType_RELU6 : tfl::ActivationFunctionType_RELU;
    outs.push_back(b.Conv2D(parts[k], Filter(b, "w" + std::to_string(k), 5, 3, in, 10 + k),
                            b.ConstF32("b" + std::to_string(k), {5}, RandomValues(5, 20 + k)), tfl::Padding_VALID, 2, 2,
                            act));
  }
  g.part_output = outs[1];
  if (v == Variant::kConcatReordered) std::swap(outs[0], outs[1]);
  b.Output(b.Concatenation(outs, 3));
  const std::vector<int> halves = b.SplitV(x, {6, 6}, -1);
  std::vector<int> pointwise;
  for (int k = 0; k < 2; ++k)
    pointwise.push_back(b.Conv2D(halves[k], Filter(b, "p" + std::to_string(k), 7, 1, 6, 30 + k), builder::kNoInput,
                                 tfl::Padding_SAME, 1, 1));
  b.Output(b.Concatenation(pointwise, -1,
                           concat_clamps ? tfl::ActivationFunctionType_RELU6 : tfl::ActivationFunctionType_NONE));
  if (v == Variant::kPartReadTwice) b.Output(parts[0]);
  if (v == Variant::kConvOutputShared) b.Output(outs[2]);
  g.model = b.Finish();
  return g;
}

int Skipped(const ir::Model& m, exec::Precision p = exec::Precision::kFp32) {
  return exec::Interpreter(std::make_shared<const ir::Model>(m), {.precision = p}).ops_skipped();
}

TEST(GroupedConvolution, RunsAsOneConvolutionWithLiteRtsValues) {
  const GroupedGraph g = Build();
  exec::Interpreter it(std::make_shared<const ir::Model>(g.model));
  // Both SPLITs, five convolutions, and the PAD the grouped convolution reads through.
  EXPECT_EQ(it.ops_skipped(), 8);
  int grouped = 0;
  for (size_t i = 0; i < g.model.main().ops.size(); ++i)
    grouped += it.RunsAs(static_cast<int>(i)) == "CONV_2D (grouped)";
  EXPECT_EQ(grouped, 2);
  const npy::Array x = RandomF32(kInputShape, 4, -2.0f, 2.0f);
  ExpectMatchesLiteRt(g.model, {x});
  ExpectThreadsAgree(g.model, {x});
}

// oneDNN may order a grouped convolution's sums otherwise than one part's,
// so fp32 may differ by float rounding, and a half output by the half ulp
// such a difference can tip.
TEST(GroupedConvolution, EveryNumericModeGivesTheValuesOfThePerPartRun) {
  const GroupedGraph grouped = Build(), apart = Build(Variant::kPartReadTwice);
  const npy::Array x = RandomF32(kInputShape, 5, -2.0f, 2.0f);
  for (exec::Precision p : {exec::Precision::kFp32, exec::Precision::kFp16Storage, exec::Precision::kFp16Compute,
                            exec::Precision::kFp16Fused}) {
    SCOPED_TRACE(std::string(exec::PrecisionName(p)));
    EXPECT_GE(Skipped(grouped.model, p), 7);
    const auto a = RunOurs(grouped.model, {x}, {.precision = p});
    const auto b = RunOurs(apart.model, {x}, {.precision = p});
    const float tolerance = p == exec::Precision::kFp32 ? 1e-6f : 1e-3f;
    ExpectArrayNear(a.at(0), b.at(0), tolerance);
    ExpectArrayNear(a.at(1), b.at(1), tolerance);
  }
}

TEST(GroupedConvolution, ATappedRunSeesEachPartsOutput) {
  const GroupedGraph g = Build();
  exec::Interpreter it(std::make_shared<const ir::Model>(g.model));
  const npy::Array x = RandomF32(kInputShape, 6, -2.0f, 2.0f);
  it.SetInput(0, x);
  std::vector<float> part;
  it.Invoke([&](int, int tensor, const exec::Tensor& v) {
    if (tensor == g.part_output) part.assign(v.as<float>(), v.as<float>() + v.num_elements());
  });
  // [1, 5, 4, 5]: the second five channels of the concatenation.
  ASSERT_EQ(part.size(), 1u * 5 * 4 * 5);
  const npy::Array all = it.Output(0);
  std::vector<float> slice;
  for (int pixel = 0; pixel < 5 * 4; ++pixel)
    for (int c = 0; c < 5; ++c) slice.push_back(all.as<float>()[pixel * 15 + 5 + c]);
  ExpectFloatsNear(part, slice, 1e-6f);
  // Timing taps see only what an untapped run computes.
  int splits_tapped = 0;
  it.Invoke(
      [&](int op, int, const exec::Tensor&) {
        const auto code = g.model.main().ops[op].code;
        splits_tapped += code == tfl::BuiltinOperator_SPLIT || code == tfl::BuiltinOperator_SPLIT_V;
      },
      exec::Tapping::kAsUntapped);
  EXPECT_EQ(splits_tapped, 0);
}

TEST(GroupedConvolution, NearMissesStayApart) {
  // The second group (SPLIT_V, 1x1) still groups: 1 SPLIT_V + 2 CONV_2Ds.
  EXPECT_EQ(Skipped(Build(Variant::kPartReadTwice).model), 3);
  EXPECT_EQ(Skipped(Build(Variant::kConcatReordered).model), 3);
  EXPECT_EQ(Skipped(Build(Variant::kOtherActivation).model), 3);
  EXPECT_EQ(Skipped(Build(Variant::kUnequalParts).model), 3);
  EXPECT_EQ(Skipped(Build(Variant::kConvOutputShared).model), 3);
  EXPECT_EQ(Skipped(Build(Variant::kGrouped, /*concat_clamps=*/true).model), 5);
  const npy::Array x = RandomF32(kInputShape, 7, -2.0f, 2.0f);
  for (Variant v : {Variant::kConcatReordered, Variant::kUnequalParts}) ExpectMatchesLiteRt(Build(v).model, {x});
}

}  // namespace
}  // namespace gpuclean::testing::grouped_convolution
