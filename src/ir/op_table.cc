#include "gpuclean/op_table.h"

#include <array>

namespace gpuclean::ir {
namespace {

constexpr size_t kCodes = static_cast<size_t>(tfl::BuiltinOperator_MAX) + 1;

// OPTIONS names a schema options table, or NoOptions.
namespace options_type {
using namespace tfl;
constexpr BuiltinOptions BuiltinOptions_NoOptions = BuiltinOptions_NONE;
}  // namespace options_type

struct Table {
  std::array<OpTraits, kCodes> traits{};
  std::vector<tfl::BuiltinOperator> ops;
  Table() {
#define GPUCLEAN_OP(CODE, FAMILY, RANK_RULE, KERNEL, FLAGS, OPTIONS, VERSION)           \
  traits[tfl::BuiltinOperator_##CODE] = {OpFamily::FAMILY, RankRule::RANK_RULE, FLAGS,  \
                                         options_type::BuiltinOptions_##OPTIONS, true}; \
  ops.push_back(tfl::BuiltinOperator_##CODE);
#include "ir/ops.def"
#undef GPUCLEAN_OP
  }
};

const Table& TheTable() {
  static const Table table;
  return table;
}

}  // namespace

const OpTraits& TraitsOf(tfl::BuiltinOperator code) {
  static const OpTraits none{};
  const auto index = static_cast<size_t>(code);
  return index < kCodes ? TheTable().traits[index] : none;
}

const std::vector<tfl::BuiltinOperator>& TableOps() { return TheTable().ops; }

bool IsBinaryElementwise(tfl::BuiltinOperator code) {
  const OpTraits& t = TraitsOf(code);
  return t.family == OpFamily::kBinaryMath && t.rank_rule == RankRule::kBroadcast;
}

bool IsUnaryElementwise(tfl::BuiltinOperator code) {
  const OpTraits& t = TraitsOf(code);
  return (t.family == OpFamily::kUnaryMath || t.family == OpFamily::kActivation) &&
         t.rank_rule == RankRule::kPerElement;
}

bool IsDotProduct(tfl::BuiltinOperator code) { return TraitsOf(code).family == OpFamily::kDotProduct; }
bool IsGpuLinked(tfl::BuiltinOperator code) { return (TraitsOf(code).flags & kGpuLinked) != 0; }
bool Accumulates(tfl::BuiltinOperator code) { return (TraitsOf(code).flags & kAccumulates) != 0; }

std::string_view RankRuleName(RankRule rule) {
  switch (rule) {
    case RankRule::kNone: return "none";
    case RankRule::kPerElement: return "per-element";
    case RankRule::kBroadcast: return "broadcast";
    case RankRule::kSameShape: return "same-shape";
    case RankRule::kReshape: return "reshape";
    case RankRule::kTranspose: return "transpose";
    case RankRule::kOneAxis: return "one-axis";
    case RankRule::kSlice: return "slice";
    case RankRule::kPad: return "pad";
    case RankRule::kTile: return "tile";
    case RankRule::kBroadcastTo: return "broadcast-to";
    case RankRule::kReduce: return "reduce";
    case RankRule::kLastAxis: return "last-axis";
    case RankRule::kBatchMatMul: return "batch-matmul";
    case RankRule::kFullyConnected: return "fully-connected";
  }
  return "none";
}

}  // namespace gpuclean::ir
