// The op table (src/ir/ops.def) is where each op's facts are declared once.
#include <gtest/gtest.h>

#include <set>

#include "gpuclean/op_table.h"
#include "gpuclean/shapes.h"

namespace gpuclean::ir {
namespace {

// An op whose shapes gpuclean knows has a row, so its rank rule is a
// declared choice (kNone included), never a silent default.
TEST(OpTable, EveryOpWithAShapeRuleHasARow) {
  for (int c = 0; c <= static_cast<int>(tfl::BuiltinOperator_MAX); ++c) {
    Op op;
    op.code = static_cast<tfl::BuiltinOperator>(c);
    if (op.code == tfl::BuiltinOperator_CUSTOM || !HasShapeRule(op)) continue;
    EXPECT_TRUE(TraitsOf(op.code).in_table) << BuiltinName(op.code) << " has a shape rule but no row in ops.def";
  }
}

TEST(OpTable, EachOpHasOneRow) {
  const std::vector<tfl::BuiltinOperator>& ops = TableOps();
  EXPECT_EQ(std::set<tfl::BuiltinOperator>(ops.begin(), ops.end()).size(), ops.size());
}

// Rank rules that treat every element alike belong to elementwise families.
TEST(OpTable, ElementwiseRulesAreOnElementwiseFamilies) {
  const std::set<OpFamily> elementwise = {OpFamily::kUnaryMath,  OpFamily::kBinaryMath, OpFamily::kActivation,
                                          OpFamily::kComparison, OpFamily::kLogical,    OpFamily::kSelection,
                                          OpFamily::kConversion};
  for (tfl::BuiltinOperator code : TableOps()) {
    const RankRule rule = TraitsOf(code).rank_rule;
    if (rule == RankRule::kPerElement || rule == RankRule::kBroadcast || rule == RankRule::kSameShape)
      EXPECT_TRUE(elementwise.count(TraitsOf(code).family)) << BuiltinName(code);
  }
  EXPECT_EQ(TraitsOf(tfl::BuiltinOperator_CONV_2D).rank_rule, RankRule::kNone);
  EXPECT_FALSE(TraitsOf(tfl::BuiltinOperator_CALL_ONCE).in_table);
}

}  // namespace
}  // namespace gpuclean::ir
