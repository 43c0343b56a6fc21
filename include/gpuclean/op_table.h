#pragma once
// Facts about each TFLite op, declared once in src/ir/ops.def.
#include <cstdint>
#include <string_view>
#include <vector>

#include "gpuclean/ir.h"

namespace gpuclean::ir {

enum class OpFamily {
  kUnknown,
  kUnaryMath,
  kBinaryMath,
  kActivation,
  kComparison,
  kLogical,
  kSelection,
  kConversion,
  kLayout,
  kIndexing,
  kReduction,
  kNormalization,
  kDotProduct,
  kPooling,
  kResize,
};

// How an op with tensors of rank >= 5 is computed at rank <= 4.
enum class RankRule {
  kNone,            // no rank-4 form known
  kPerElement,      // one input, elementwise: any layout of the elements
  kBroadcast,       // elementwise over right-aligned broadcasting operands
  kSameShape,       // elementwise over operands of the output's shape
  kReshape,         // reinterprets the row-major elements
  kTranspose,       // axes that stay adjacent and in order merge
  kOneAxis,         // acts along one axis: the axes before it merge, and those after
  kSlice,           // a sliced axis starts a merged run of whole axes
  kPad,             // a padded axis stands alone
  kTile,            // a tiled axis starts a run; more than 4 runs: one tile per axis
  kBroadcastTo,     // runs of one broadcast pattern; more than 4: one step per run
  kReduce,          // runs of reduced and of kept axes
  kLastAxis,        // the axes before the last merge
  kBatchMatMul,     // the batch axes merge per broadcast pattern
  kFullyConnected,  // the rows merge
};

// Per-op flags (FLAGS in ops.def, which says what each means).
enum OpFlag : uint32_t {
  kNoFlags = 0,
  kGpuLinked = 1u << 0,
  kAccumulates = 1u << 1,
};

struct OpTraits {
  OpFamily family = OpFamily::kUnknown;
  RankRule rank_rule = RankRule::kNone;
  uint32_t flags = kNoFlags;
  tfl::BuiltinOptions options = tfl::BuiltinOptions_NONE;  // the options table's type
  bool in_table = false;                                   // false: the op has no row (defaults above)
};

// The op's row; defaults (unknown, kNone) for ops without one.
const OpTraits& TraitsOf(tfl::BuiltinOperator code);
std::string_view RankRuleName(RankRule rule);

// Predicates read from the table (ops.def's header explains each).
bool IsBinaryElementwise(tfl::BuiltinOperator code);  // kBinaryMath, broadcasting
bool IsUnaryElementwise(tfl::BuiltinOperator code);   // unary math or activation, per element
bool IsDotProduct(tfl::BuiltinOperator code);
bool IsGpuLinked(tfl::BuiltinOperator code);
bool Accumulates(tfl::BuiltinOperator code);
// Every op with a row, in table order.
const std::vector<tfl::BuiltinOperator>& TableOps();

}  // namespace gpuclean::ir
