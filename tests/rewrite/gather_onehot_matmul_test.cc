// ctest-labels: litert webgpu
#include <limits>

#include "gpuclean/builder.h"
#include "gpuclean/error.h"
#include "gpuclean/synth.h"
#include "rewrite/pass_proof.h"
#include "support/arrays.h"
#include "support/tflite_names.h"

namespace gpuclean::rewrite {
namespace {

using builder::GraphBuilder;
using ::gpuclean::testing::tflite_names::F32;
using ::gpuclean::testing::tflite_names::I32;

// Distinct, non-round values so a wrong row or column cannot pass.
std::vector<float> TableValues(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = 0.37f * static_cast<float>(i % 23) - 3.1f + 0.001f * static_cast<float>(i);
  return v;
}

int Count(const ir::Model& m, tfl::BuiltinOperator code) { return testing::CountOps(m, code); }

// The lookup must give the table's bits: compare exactly, not within a bound.
void ExpectBitIdentical(const ir::Model& model, const ir::Model& rewritten, const std::vector<npy::Array>& inputs) {
  EXPECT_EQ(testing::RunOurs(model, inputs)[0].data, testing::RunOurs(rewritten, inputs)[0].data);
}

// A class-id embedding: table [10, 6], ids [2, 3] -> [2, 3, 6].
TEST(GatherOneHotMatMul, EmbeddingLookupAlongAxis0) {
  GraphBuilder b;
  const int ids = b.Input("ids", I32, {2, 3});
  b.Output(b.Gather(b.ConstF32("table", {10, 6}, TableValues(60)), ids, 0));
  const ir::Model model = b.Finish();
  const std::vector<npy::Array> inputs = {testing::I32({2, 3}, {9, 0, 4, 4, 7, 1})};
  const testing::PassProof proof = testing::ExpectPassProven("gather-onehot-matmul", model, inputs);
  EXPECT_EQ(Count(proof.rewritten, tfl::BuiltinOperator_GATHER), 0);
  EXPECT_EQ(Count(proof.rewritten, tfl::BuiltinOperator_FULLY_CONNECTED), 1);
  ExpectBitIdentical(model, proof.rewritten, inputs);
  testing::ExpectFindingGone(model, proof.rewritten, "gather-runtime-indices");
  testing::ExpectFindingGone(model, proof.rewritten, "gather-runtime-indices", "mldrift-webgpu@2.5.3");
}

// Gathering a middle axis: table [3, 8, 2] along axis 1 with ids [4] ->
// [3, 4, 2]; the rows land between the outer and inner dims.
TEST(GatherOneHotMatMul, MiddleAxisOfAnFp16Table) {
  GraphBuilder b;
  const int ids = b.Input("ids", I32, {4});
  const int table = b.Dequantize(b.ConstF16FromF32("table", {3, 8, 2}, TableValues(48)));
  b.Output(b.Gather(table, ids, 1));
  const ir::Model model = b.Finish();
  const std::vector<npy::Array> inputs = {testing::I32({4}, {7, 2, 2, 0})};
  const testing::PassProof proof = testing::ExpectPassProven("gather-onehot-matmul", model, inputs);
  EXPECT_EQ(Count(proof.rewritten, tfl::BuiltinOperator_GATHER), 0);
  ExpectBitIdentical(model, proof.rewritten, inputs);
  testing::ExpectFindingGone(model, proof.rewritten, "gather-runtime-indices");
}

// GATHER_ND with two index components: table [5, 7, 3], indices [2, 2, 2]
// -> [2, 2, 3]; the two one-hots combine into one over the 35 (i, j) rows.
TEST(GatherOneHotMatMul, GatherNdWithTwoComponents) {
  GraphBuilder b;
  const int idx = b.Input("idx", I32, {2, 2, 2});
  b.Output(b.GatherNd(b.ConstF32("table", {5, 7, 3}, TableValues(105)), idx));
  const ir::Model model = b.Finish();
  const std::vector<npy::Array> inputs = {testing::I32({2, 2, 2}, {4, 6, 0, 0, 2, 3, 4, 0})};
  const testing::PassProof proof = testing::ExpectPassProven("gather-onehot-matmul", model, inputs);
  EXPECT_EQ(Count(proof.rewritten, tfl::BuiltinOperator_GATHER_ND), 0);
  ExpectBitIdentical(model, proof.rewritten, inputs);
  testing::ExpectFindingGone(model, proof.rewritten, "gather-nd-runtime-indices");
}

// Indices computed in the graph (ARG_MAX of scores), one component.
TEST(GatherOneHotMatMul, GatherNdOfAnArgMax) {
  GraphBuilder b;
  const int scores = b.Input("scores", F32, {1, 4, 9});
  const int best = b.Reshape(b.ArgMax(scores, 2), {4, 1});
  b.Output(b.GatherNd(b.ConstF32("codebook", {9, 5}, TableValues(45)), best));
  const ir::Model model = b.Finish();
  const std::vector<npy::Array> inputs = {synth::HashUniform({1, 4, 9}, -4, 4, 17)};
  const testing::PassProof proof = testing::ExpectPassProven("gather-onehot-matmul", model, inputs);
  ExpectBitIdentical(model, proof.rewritten, inputs);
}

// LiteRT (and our interpreter) fail on an index outside the table; the
// rewrite cannot fail at run time and gives a zero row instead (documented).
TEST(GatherOneHotMatMul, OutOfRangeIndexGivesAZeroRowWhereTheOriginalFails) {
  GraphBuilder b;
  const int ids = b.Input("ids", I32, {2});
  b.Output(b.Gather(b.ConstF32("table", {4, 3}, TableValues(12)), ids, 0));
  const ir::Model model = b.Finish();
  const std::vector<npy::Array> inputs = {testing::I32({2}, {1, 4})};
  EXPECT_THROW(testing::RunOurs(model, inputs), Error);
  ir::Model rewritten = model;
  ASSERT_EQ(FindPass("gather-onehot-matmul")->Apply(rewritten, {}).sites.size(), 1u);
  const npy::Array out = testing::RunOurs(rewritten, inputs)[0];
  const std::vector<float> table = TableValues(12);
  for (int c = 0; c < 3; ++c) {
    EXPECT_EQ(out.as<float>()[c], table[3 + c]) << "row 1";
    EXPECT_EQ(out.as<float>()[3 + c], 0.0f) << "row of index 4";
  }
  testing::TempDir dir;
  format::WriteModel(model, dir.file("gather.tflite"));
  EXPECT_ANY_THROW(testing::RunLiteRt(dir.file("gather.tflite"), inputs)) << "LiteRT should refuse index 4";
}

size_t SitesGatherOnehotMatmul(ir::Model model, const PassOptions& options = {}) {
  return FindPass("gather-onehot-matmul")->Apply(model, options).sites.size();
}

std::string SkipReason(ir::Model model, const PassOptions& options = {}) {
  const PassResult r = FindPass("gather-onehot-matmul")->Apply(model, options);
  return r.skipped.empty() ? "" : r.skipped[0].why;
}

ir::Model TableLookup(int32_t rows) {
  GraphBuilder b;
  const int ids = b.Input("ids", I32, {3, 1});
  b.Output(b.GatherNd(b.ConstF32("table", {rows, 2}, TableValues(2 * rows)), ids));
  return b.Finish();
}

TEST(GatherOneHotMatMul, LeavesTablesAboveTheRowLimitAlone) {
  EXPECT_EQ(SitesGatherOnehotMatmul(TableLookup(1024)), 1u);
  const ir::Model big = TableLookup(1025);
  EXPECT_EQ(SitesGatherOnehotMatmul(big), 0u);
  EXPECT_NE(SkipReason(big).find("1025 rows, more than --onehot-max-rows 1024"), std::string::npos) << SkipReason(big);
  EXPECT_EQ(SitesGatherOnehotMatmul(big, PassOptions{.onehot_max_rows = 2048}), 1u);
}

TEST(GatherOneHotMatMul, LeavesConstantIndicesRuntimeTablesAndNonFiniteTablesAlone) {
  // The gather-rows micro-probe: constant indices into a runtime tensor.
  EXPECT_EQ(SitesGatherOnehotMatmul(synth::Build("gather-rows")), 0u);
  EXPECT_EQ(SitesGatherOnehotMatmul(synth::Build("gather-nd-rows")), 0u);
  {
    GraphBuilder b;  // runtime table, runtime indices
    const int x = b.Input("x", F32, {4, 3});
    b.Output(b.Gather(x, b.Input("ids", I32, {2}), 0));
    EXPECT_EQ(SitesGatherOnehotMatmul(b.Finish()), 0u);
  }
  {
    GraphBuilder b;  // an infinite entry: 0 x inf would poison every other row
    std::vector<float> values = TableValues(12);
    values[5] = std::numeric_limits<float>::infinity();
    b.Output(b.Gather(b.ConstF32("table", {4, 3}, values), b.Input("ids", I32, {2}), 0));
    const ir::Model model = b.Finish();
    EXPECT_EQ(SitesGatherOnehotMatmul(model), 0u);
    EXPECT_NE(SkipReason(model).find("non-finite"), std::string::npos) << SkipReason(model);
  }
}

}  // namespace
}  // namespace gpuclean::rewrite
