// Bisect judges selected indices as sets: a top-K that lists the same rows
// in another order has not broken, and one that picks other rows at a
// half-precision near-tie is named as a selection, never by the numeric
// correlation of its index values.
#include <gtest/gtest.h>

#include <cstring>

#include "gpuclean/bisect.h"
#include "gpuclean/builder.h"

namespace gpuclean::analyze {
namespace {

npy::Array Scores(const std::vector<float>& values) {
  npy::Array a;
  a.dtype = tfl::TensorType_FLOAT32;
  a.shape = {1, static_cast<int64_t>(values.size())};
  a.data.resize(values.size() * 4);
  std::memcpy(a.data.data(), values.data(), a.data.size());
  return a;
}

// scores -> (x * 1) -> top-k -> the picked scores again (a gather).
std::shared_ptr<const ir::Model> Selection(int n, int k) {
  builder::GraphBuilder b;
  const int x = b.Input("scores", tfl::TensorType_FLOAT32, {1, n});
  const int scaled = b.Mul(x, b.ConstF32("one", {}, {1.0f}));
  auto [values, indices] = b.TopKV2(scaled, k);
  b.Output(b.Gather(scaled, indices, 1, 1));
  b.Output(values);
  return std::make_shared<const ir::Model>(b.Finish());
}

BisectSide Side(const std::shared_ptr<const ir::Model>& m, exec::Precision p) {
  return {m, std::string(exec::PrecisionName(p)), p};
}

TEST(BisectSelection, ANearTieThatSwapsRowsIsASelectionNotACorrelation) {
  // 1.0002 and 1.0001 are one half step apart at most: fp16 rounds both to
  // 1.0 and the top-1 falls to the lower index.
  const auto model = Selection(6, 1);
  const BisectReport r = Bisect(Side(model, exec::Precision::kFp32), Side(model, exec::Precision::kFp16Compute),
                                {Scores({1.0001f, 1.0002f, 0.25f, 0.5f, 0.125f, 0.75f})});
  ASSERT_TRUE(r.first_break.has_value()) << RenderText(r);
  const TensorDivergence& d = r.tensors[*r.first_break];
  EXPECT_EQ(d.op_name, "TOPK_V2");
  EXPECT_TRUE(d.compared_as_sets);
  EXPECT_EQ(d.rows_differ, 1);
  EXPECT_EQ(r.cause, Cause::kSelectionNearTie);
  const std::string text = RenderText(r);
  EXPECT_NE(text.find("indices compared as sets: 1 of 1 row(s) select a different set"), std::string::npos) << text;
  EXPECT_EQ(text.find("\n  correlation "), std::string::npos) << text;  // no numeric line for indices
}

TEST(BisectSelection, TheSameRowsInAnotherOrderAreNoBreak) {
  // Both near-tied scores are inside the top-2 either way; only their order
  // can change.
  const auto model = Selection(6, 2);
  const BisectReport r = Bisect(Side(model, exec::Precision::kFp32), Side(model, exec::Precision::kFp16Compute),
                                {Scores({1.0001f, 1.0002f, 0.25f, 0.5f, 0.125f, 0.75f})});
  for (const TensorDivergence& d : r.tensors)
    if (d.compared_as_sets) EXPECT_FALSE(d.diverged) << d.name;
  if (r.first_break) EXPECT_FALSE(r.tensors[*r.first_break].compared_as_sets) << RenderText(r);
}

}  // namespace
}  // namespace gpuclean::analyze
