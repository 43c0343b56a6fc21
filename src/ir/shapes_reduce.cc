// Shape rules of ops that reduce or scan along axes: reductions, arg
// max/min, top-k, softmaxes, normalisation and cumulative sums.
#include <algorithm>

#include "gpuclean/op_table.h"
#include "ir/shapes_internal.h"

namespace gpuclean::ir::shapes {
namespace {

// Axes may be negative and repeated; keep_dims leaves reduced dimensions as 1.
std::vector<TensorSpec> Reduce(const OpView& v) {
  v.ExpectInputCount(2);
  v.ExpectDType(1, {tfl::TensorType_INT32, tfl::TensorType_INT64}, "axis");
  if (v.rank(1) > 1) v.Fail("axis must be a scalar or a vector, got {}", FormatShape(v.shape(1)));
  const std::vector<int> axes = NormalizeAxes(v.Ints(1, "axis"), v.rank(0), v.op().name());
  const bool keep_dims = v.Options<tfl::ReducerOptionsT>().keep_dims;
  Shape out;
  for (int d = 0; d < v.rank(0); ++d) {
    const bool reduced = std::find(axes.begin(), axes.end(), d) != axes.end();
    if (!reduced)
      out.push_back(v.shape(0)[d]);
    else if (keep_dims)
      out.push_back(1);
  }
  return {{v.dtype(0), out}};
}

std::vector<TensorSpec> ArgMinMax(const OpView& v) {
  v.ExpectInputCount(2);
  v.ExpectDType(1, {tfl::TensorType_INT32, tfl::TensorType_INT64}, "axis");
  if (v.rank(0) < 1) v.Fail("input must have rank >= 1");
  if (v.num_elements(1) != 1) v.Fail("axis must hold one value, got shape {}", FormatShape(v.shape(1)));
  const int axis = NormalizeAxis(v.Ints(1, "axis")[0], v.rank(0), v.op().name());
  // ArgMaxOptions and ArgMinOptions have the same layout.
  const DType type = v.op().code == tfl::BuiltinOperator_ARG_MAX ? v.Options<tfl::ArgMaxOptionsT>().output_type
                                                                 : v.Options<tfl::ArgMinOptionsT>().output_type;
  if (type != tfl::TensorType_INT32 && type != tfl::TensorType_INT64)
    v.Fail("output_type must be int32 or int64, got {}", DTypeName(type));
  Shape out = v.shape(0);
  out.erase(out.begin() + axis);
  return {{type, out}};
}

// Values and indices of the k largest entries along the last dimension.
std::vector<TensorSpec> TopK(const OpView& v) {
  v.ExpectInputCount(2);
  v.ExpectDType(1, {tfl::TensorType_INT32, tfl::TensorType_INT16}, "k");
  if (v.rank(0) < 1) v.Fail("input must have rank >= 1");
  const int64_t k = v.ScalarInt(1, "k");
  if (k < 0 || k > v.shape(0).back()) v.Fail("k = {} is outside [0, {}]", k, v.shape(0).back());
  Shape out = v.shape(0);
  out.back() = static_cast<int32_t>(k);
  const DType index_type =
      v.declared_output(1) == tfl::TensorType_INT16 ? tfl::TensorType_INT16 : tfl::TensorType_INT32;
  return {{v.dtype(0), out}, {index_type, out}};
}

// Padded to a constant max_output_size (LiteRT's static form); the second
// output counts the valid indices.
std::vector<TensorSpec> NonMaxSuppression(const OpView& v) {
  v.ExpectInputCount(5);
  v.ExpectDType(0, {tfl::TensorType_FLOAT32}, "boxes");
  v.ExpectDType(1, {tfl::TensorType_FLOAT32}, "scores");
  v.ExpectDType(2, {tfl::TensorType_INT32}, "max_output_size");
  v.ExpectDType(3, {tfl::TensorType_FLOAT32}, "iou_threshold");
  v.ExpectDType(4, {tfl::TensorType_FLOAT32}, "score_threshold");
  v.ExpectRank(0, 2, "boxes");
  v.ExpectRank(1, 1, "scores");
  if (v.shape(0)[1] != 4) v.Fail("boxes must be [N, 4], got {}", FormatShape(v.shape(0)));
  if (v.shape(1)[0] != v.shape(0)[0])
    v.Fail("scores {} do not match boxes {}", FormatShape(v.shape(1)), FormatShape(v.shape(0)));
  const int64_t max_output = v.ScalarInt(2, "max_output_size");
  if (max_output < 0) v.Fail("max_output_size {} is negative", max_output);
  return {{tfl::TensorType_INT32, {static_cast<int32_t>(max_output)}}, {tfl::TensorType_INT32, {}}};
}

std::vector<TensorSpec> Normalize(const OpView& v) {
  v.ExpectInputCount(1);
  if (v.rank(0) < 1) v.Fail("input must have rank >= 1");
  return {{v.dtype(0), v.shape(0)}};
}

std::vector<TensorSpec> Cumsum(const OpView& v) {
  v.ExpectInputCount(2);
  v.ExpectDType(1, {tfl::TensorType_INT32}, "axis");
  NormalizeAxis(v.ScalarInt(1, "axis"), v.rank(0), v.op().name());
  return {{v.dtype(0), v.shape(0)}};
}

}  // namespace

void AddReduceRules(RuleTable& t) {
  // The reductions over the axes of input 1: the op table's kReduce rows.
  for (tfl::BuiltinOperator code : TableOps())
    if (TraitsOf(code).rank_rule == RankRule::kReduce) t.builtin[code] = Reduce;
  t.builtin[tfl::BuiltinOperator_ARG_MAX] = ArgMinMax;
  t.builtin[tfl::BuiltinOperator_ARG_MIN] = ArgMinMax;
  t.builtin[tfl::BuiltinOperator_TOPK_V2] = TopK;
  t.builtin[tfl::BuiltinOperator_NON_MAX_SUPPRESSION_V4] = NonMaxSuppression;
  t.builtin[tfl::BuiltinOperator_SOFTMAX] = Normalize;
  t.builtin[tfl::BuiltinOperator_LOG_SOFTMAX] = Normalize;
  t.builtin[tfl::BuiltinOperator_L2_NORMALIZATION] = Normalize;
  t.builtin[tfl::BuiltinOperator_CUMSUM] = Cumsum;
}

}  // namespace gpuclean::ir::shapes
