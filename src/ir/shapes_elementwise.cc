// Shape rules of elementwise ops: unary maps, broadcasting binary ops,
// comparisons and logic, selects, casts and (de)quantisation.
#include "gpuclean/op_table.h"
#include "ir/shapes_internal.h"

namespace gpuclean::ir::shapes {
namespace {

constexpr DType kBool = tfl::TensorType_BOOL;

std::vector<TensorSpec> SameAsInput(const OpView& v) {
  v.ExpectInputCount(1);
  return {{v.dtype(0), v.shape(0)}};
}

std::vector<TensorSpec> Unary(const OpView& v) {
  v.ExpectInputCount(1);
  if (v.dtype(0) == kBool) v.Fail("input must be numeric, got bool");
  return {{v.dtype(0), v.shape(0)}};
}

Shape Broadcast(const OpView& v, int a, int b) {
  try {
    return BroadcastShapes(v.shape(a), v.shape(b));
  } catch (const Error& e) {
    v.Fail("{}", e.what());
  }
}

std::vector<TensorSpec> Binary(const OpView& v) {
  v.ExpectInputCount(2);
  v.ExpectSameDType(0, 1);
  if (v.dtype(0) == kBool) v.Fail("inputs must be numeric, got bool");
  return {{v.dtype(0), Broadcast(v, 0, 1)}};
}

std::vector<TensorSpec> Comparison(const OpView& v) {
  v.ExpectInputCount(2);
  v.ExpectSameDType(0, 1);
  return {{kBool, Broadcast(v, 0, 1)}};
}

std::vector<TensorSpec> LogicalBinary(const OpView& v) {
  v.ExpectInputCount(2);
  v.ExpectDType(0, {kBool}, "x");
  v.ExpectDType(1, {kBool}, "y");
  return {{kBool, Broadcast(v, 0, 1)}};
}

std::vector<TensorSpec> LogicalNot(const OpView& v) {
  v.ExpectInputCount(1);
  v.ExpectDType(0, {kBool}, "x");
  return {{kBool, v.shape(0)}};
}

std::vector<TensorSpec> Prelu(const OpView& v) {
  v.ExpectInputCount(2);
  v.ExpectSameDType(0, 1);
  return {{v.dtype(0), Broadcast(v, 0, 1)}};
}

std::vector<TensorSpec> AddN(const OpView& v) {
  if (v.num_inputs() < 1) v.Fail("expects at least one input");
  for (int i = 1; i < v.num_inputs(); ++i) {
    v.ExpectSameDType(0, i);
    if (v.shape(i) != v.shape(0))
      v.Fail("input {} has shape {} but input 0 has {}", i, FormatShape(v.shape(i)), FormatShape(v.shape(0)));
  }
  return {{v.dtype(0), v.shape(0)}};
}

// SELECT (v1): x and y have one shape; the condition has it too, or is a
// scalar, or a vector along the first dimension.
std::vector<TensorSpec> Select(const OpView& v) {
  v.ExpectInputCount(3);
  v.ExpectDType(0, {kBool}, "condition");
  v.ExpectSameDType(1, 2);
  if (v.shape(1) != v.shape(2))
    v.Fail("x {} and y {} must have the same shape", FormatShape(v.shape(1)), FormatShape(v.shape(2)));
  const Shape& cond = v.shape(0);
  const bool ok =
      cond == v.shape(1) || cond.empty() || (cond.size() == 1 && v.rank(1) >= 1 && cond[0] == v.shape(1)[0]);
  if (!ok)
    v.Fail("condition {} must match x {}, be a scalar, or a vector along its first dimension", FormatShape(cond),
           FormatShape(v.shape(1)));
  return {{v.dtype(1), v.shape(1)}};
}

// SELECT_V2 broadcasts all three inputs.
std::vector<TensorSpec> SelectV2(const OpView& v) {
  v.ExpectInputCount(3);
  v.ExpectDType(0, {kBool}, "condition");
  v.ExpectSameDType(1, 2);
  Shape shape;
  try {
    shape = BroadcastShapes(BroadcastShapes(v.shape(0), v.shape(1)), v.shape(2));
  } catch (const Error& e) {
    v.Fail("{}", e.what());
  }
  return {{v.dtype(1), shape}};
}

std::vector<TensorSpec> Cast(const OpView& v) {
  v.ExpectInputCount(1);
  // Converters often write CAST without options; the target type is then the
  // output tensor's own type.
  if (v.op().options.type == tfl::BuiltinOptions_CastOptions) {
    // LiteRT ignores in_data_type: the input tensor's type is what counts.
    return {{v.Options<tfl::CastOptionsT>().out_data_type, v.shape(0)}};
  }
  if (auto declared = v.declared_output(0)) return {{*declared, v.shape(0)}};
  v.Fail("has neither options nor a declared output type");
}

std::vector<TensorSpec> Dequantize(const OpView& v) {
  v.ExpectInputCount(1);
  v.ExpectDType(0,
                {tfl::TensorType_INT8, tfl::TensorType_UINT8, tfl::TensorType_INT16, tfl::TensorType_FLOAT16,
                 tfl::TensorType_INT4},
                "input");
  return {{tfl::TensorType_FLOAT32, v.shape(0)}};
}

std::vector<TensorSpec> Quantize(const OpView& v) {
  v.ExpectInputCount(1);
  if (auto declared = v.declared_output(0)) return {{*declared, v.shape(0)}};
  v.Fail("the output type must be declared by the model");
}

}  // namespace

void AddElementwiseRules(RuleTable& t) {
  // The families' rules, from the op table; ops that differ are set below.
  for (tfl::BuiltinOperator code : TableOps()) {
    if (IsUnaryElementwise(code)) t.builtin[code] = Unary;
    if (IsBinaryElementwise(code)) t.builtin[code] = Binary;
    if (TraitsOf(code).family == OpFamily::kComparison) t.builtin[code] = Comparison;
  }
  for (auto code : {tfl::BuiltinOperator_ZEROS_LIKE, tfl::BuiltinOperator_DENSIFY}) t.builtin[code] = SameAsInput;
  t.builtin[tfl::BuiltinOperator_LOGICAL_AND] = LogicalBinary;
  t.builtin[tfl::BuiltinOperator_LOGICAL_OR] = LogicalBinary;
  t.builtin[tfl::BuiltinOperator_LOGICAL_NOT] = LogicalNot;
  t.builtin[tfl::BuiltinOperator_PRELU] = Prelu;
  t.builtin[tfl::BuiltinOperator_ADD_N] = AddN;
  t.builtin[tfl::BuiltinOperator_SELECT] = Select;
  t.builtin[tfl::BuiltinOperator_SELECT_V2] = SelectV2;
  t.builtin[tfl::BuiltinOperator_CAST] = Cast;
  t.builtin[tfl::BuiltinOperator_DEQUANTIZE] = Dequantize;
  t.builtin[tfl::BuiltinOperator_QUANTIZE] = Quantize;
}

}  // namespace gpuclean::ir::shapes
