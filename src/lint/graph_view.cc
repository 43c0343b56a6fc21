#include "lint/graph_view.h"

#include <flatbuffers/flatbuffers.h>
#include <flatbuffers/minireflect.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <set>

#include "gpuclean/error.h"
#include "gpuclean/op_table.h"

namespace gpuclean::lint {

GraphView::GraphView(const ir::Subgraph& g)
    : graph(g), producer(g.tensors.size(), -1), consumers(g.tensors.size()), graph_output(g.tensors.size(), false) {
  for (size_t i = 0; i < g.ops.size(); ++i) {
    for (int t : g.ops[i].outputs)
      if (t >= 0) producer[t] = static_cast<int>(i);
    for (int t : g.ops[i].inputs)
      if (t >= 0 && (consumers[t].empty() || consumers[t].back() != static_cast<int>(i)))
        consumers[t].push_back(static_cast<int>(i));
  }
  for (int t : g.outputs)
    if (t >= 0) graph_output[t] = true;
}

bool GraphView::IsConstLike(int tensor) const {
  if (tensor < 0) return false;
  if (graph.tensors[tensor].is_const()) return true;
  int p = producer[tensor];
  if (p < 0) return false;
  const ir::Op& op = graph.ops[p];
  return op.code == tfl::BuiltinOperator_DEQUANTIZE && !op.inputs.empty() && op.inputs[0] >= 0 &&
         graph.tensors[op.inputs[0]].is_const();
}

int GraphView::RuntimeInputCount(int node) const {
  int count = 0;
  for (int t : graph.ops[node].inputs)
    if (t >= 0 && !IsConstLike(t)) ++count;
  return count;
}

std::string GraphView::TensorName(int tensor) const {
  if (tensor < 0) return "(none)";
  return graph.tensors[tensor].name.empty() ? "#" + std::to_string(tensor) : graph.tensors[tensor].name;
}

bool GraphView::IsDynamic(int tensor) const {
  if (tensor < 0) return false;
  const auto& sig = graph.tensors[tensor].shape_signature;
  return std::find(sig.begin(), sig.end(), -1) != sig.end();
}

namespace {

// An op's options table written with defaults forced, so every scalar field
// is present (it reads back as the model's value and can be overwritten in
// place), and where one scalar field of it is.
struct OptionField {
  std::unique_ptr<flatbuffers::FlatBufferBuilder> fbb;
  tfl::BuiltinOptions type = tfl::BuiltinOptions_NONE;
  const flatbuffers::TypeTable* table_type = nullptr;
  flatbuffers::TypeCode code{};
  flatbuffers::voffset_t voffset = 0;

  flatbuffers::Table* table() const { return flatbuffers::GetMutableRoot<flatbuffers::Table>(fbb->GetBufferPointer()); }
};

// An op written without its options table (converters may omit it) has the
// schema's defaults: its table type from the op table, unpacked from an empty
// table.
tfl::BuiltinOptionsUnion DefaultOptions(tfl::BuiltinOperator code) {
  tfl::BuiltinOptionsUnion defaults;
  const tfl::BuiltinOptions type = ir::TraitsOf(code).options;
  if (type == tfl::BuiltinOptions_NONE) return defaults;
  flatbuffers::FlatBufferBuilder empty;
  empty.Finish(flatbuffers::Offset<flatbuffers::Table>(empty.EndTable(empty.StartTable())));
  defaults.value = tfl::BuiltinOptionsUnion::UnPack(flatbuffers::GetRoot<flatbuffers::Table>(empty.GetBufferPointer()),
                                                    type, nullptr);
  if (defaults.value) defaults.type = type;
  return defaults;
}

std::optional<OptionField> FindOptionField(const ir::Op& op, const std::string& field) {
  const tfl::BuiltinOptionsUnion defaults =
      op.options.type == tfl::BuiltinOptions_NONE ? DefaultOptions(op.code) : tfl::BuiltinOptionsUnion();
  const tfl::BuiltinOptionsUnion& options = op.options.type == tfl::BuiltinOptions_NONE ? defaults : op.options;
  if (options.type == tfl::BuiltinOptions_NONE) return std::nullopt;
  const flatbuffers::TypeTable* unions = tfl::BuiltinOptionsTypeTable();
  const auto type_index = static_cast<size_t>(options.type);
  if (type_index >= unions->num_elems) return std::nullopt;
  const int ref = unions->type_codes[type_index].sequence_ref;
  if (ref < 0) return std::nullopt;
  const flatbuffers::TypeTable* table_type = unions->type_refs[ref]();
  for (size_t i = 0; i < table_type->num_elems; ++i) {
    if (field != table_type->names[i] || table_type->type_codes[i].is_repeating) continue;
    OptionField found;
    found.fbb = std::make_unique<flatbuffers::FlatBufferBuilder>();
    found.fbb->ForceDefaults(true);
    found.fbb->Finish(options.Pack(*found.fbb));
    found.type = options.type;
    found.table_type = table_type;
    found.code = table_type->type_codes[i];
    found.voffset =
        static_cast<flatbuffers::voffset_t>(flatbuffers::FieldIndexToOffset(static_cast<flatbuffers::voffset_t>(i)));
    return found;
  }
  return std::nullopt;
}

}  // namespace

nlohmann::json OptionValue(const ir::Op& op, const std::string& field) {
  const std::optional<OptionField> found = FindOptionField(op, field);
  if (!found) return nullptr;
  const flatbuffers::Table* table = found->table();
  const flatbuffers::TypeTable* table_type = found->table_type;
  const flatbuffers::TypeCode code = found->code;
  const flatbuffers::voffset_t voffset = found->voffset;
  int64_t integer = 0;
  switch (code.base_type) {
    case flatbuffers::ET_BOOL: return table->GetField<uint8_t>(voffset, 0) != 0;
    case flatbuffers::ET_FLOAT: return table->GetField<float>(voffset, 0.0f);
    case flatbuffers::ET_DOUBLE: return table->GetField<double>(voffset, 0.0);
    case flatbuffers::ET_CHAR: integer = table->GetField<int8_t>(voffset, 0); break;
    case flatbuffers::ET_UCHAR: integer = table->GetField<uint8_t>(voffset, 0); break;
    case flatbuffers::ET_SHORT: integer = table->GetField<int16_t>(voffset, 0); break;
    case flatbuffers::ET_USHORT: integer = table->GetField<uint16_t>(voffset, 0); break;
    case flatbuffers::ET_INT: integer = table->GetField<int32_t>(voffset, 0); break;
    case flatbuffers::ET_UINT: integer = table->GetField<uint32_t>(voffset, 0); break;
    case flatbuffers::ET_LONG: integer = table->GetField<int64_t>(voffset, 0); break;
    case flatbuffers::ET_ULONG: integer = static_cast<int64_t>(table->GetField<uint64_t>(voffset, 0)); break;
    default: return nullptr;
  }
  if (code.sequence_ref >= 0) {
    const flatbuffers::TypeTable* enum_type = table_type->type_refs[code.sequence_ref]();
    for (size_t e = 0; e < enum_type->num_elems; ++e) {
      const int64_t value = enum_type->values ? enum_type->values[e] : static_cast<int64_t>(e);
      if (value == integer) return std::string(enum_type->names[e]);
    }
  }
  return integer;
}

bool SetOptionValue(ir::Op& op, const std::string& field, const nlohmann::json& value) {
  const std::optional<OptionField> found = FindOptionField(op, field);
  if (!found) return false;
  flatbuffers::Table* table = found->table();
  const flatbuffers::TypeTable* table_type = found->table_type;
  const flatbuffers::TypeCode code = found->code;
  const flatbuffers::voffset_t voffset = found->voffset;
  int64_t integer = 0;
  if (value.is_boolean())
    integer = value.get<bool>() ? 1 : 0;
  else if (value.is_number())
    integer = static_cast<int64_t>(value.get<double>());
  else if (value.is_string() && code.sequence_ref >= 0) {
    const flatbuffers::TypeTable* enum_type = table_type->type_refs[code.sequence_ref]();
    bool found = false;
    for (size_t e = 0; e < enum_type->num_elems && !found; ++e)
      if (value.get<std::string>() == enum_type->names[e]) {
        integer = enum_type->values ? enum_type->values[e] : static_cast<int64_t>(e);
        found = true;
      }
    if (!found) return false;
  } else {
    return false;
  }
  bool ok = false;
  switch (code.base_type) {
    case flatbuffers::ET_BOOL:
    case flatbuffers::ET_UCHAR: ok = table->SetField<uint8_t>(voffset, static_cast<uint8_t>(integer), 0); break;
    case flatbuffers::ET_CHAR: ok = table->SetField<int8_t>(voffset, static_cast<int8_t>(integer), 0); break;
    case flatbuffers::ET_SHORT: ok = table->SetField<int16_t>(voffset, static_cast<int16_t>(integer), 0); break;
    case flatbuffers::ET_USHORT: ok = table->SetField<uint16_t>(voffset, static_cast<uint16_t>(integer), 0); break;
    case flatbuffers::ET_INT: ok = table->SetField<int32_t>(voffset, static_cast<int32_t>(integer), 0); break;
    case flatbuffers::ET_UINT: ok = table->SetField<uint32_t>(voffset, static_cast<uint32_t>(integer), 0); break;
    case flatbuffers::ET_LONG: ok = table->SetField<int64_t>(voffset, integer, 0); break;
    case flatbuffers::ET_FLOAT:
      ok = value.is_number() && table->SetField<float>(voffset, value.get<float>(), 0.0f);
      break;
    case flatbuffers::ET_DOUBLE:
      ok = value.is_number() && table->SetField<double>(voffset, value.get<double>(), 0.0);
      break;
    default: return false;
  }
  if (!ok) return false;
  tfl::BuiltinOptionsUnion updated;
  updated.type = found->type;
  updated.value = tfl::BuiltinOptionsUnion::UnPack(table, found->type, nullptr);
  op.options = std::move(updated);
  return true;
}

const std::vector<std::string>& ConstraintKeys() {
  static const std::vector<std::string> keys = {"rank_at_least",
                                                "dtype_any",
                                                "input_dtype",
                                                "output_dtype",
                                                "runtime_inputs",
                                                "runtime_input_at",
                                                "const_input_at",
                                                "identical_inputs",
                                                "dynamic_shape",
                                                "attrs",
                                                "const_nonzero_at",
                                                "last_dim_not_multiple_of",
                                                "broadcast",
                                                "input_from_op",
                                                "not_ops",
                                                "winograd_4x4",
                                                "elementwise_const_batched",
                                                "rows_above",
                                                "version_above",
                                                "attrs_not",
                                                "input_rank",
                                                "dtype_at",
                                                "runtime_dtype_any",
                                                "builtin_op",
                                                "input_quant",
                                                "quantized_dimension_at",
                                                "inputs_above"};
  return keys;
}

std::string ConstraintValueError(const std::string& key, const nlohmann::json& value) {
  const auto list_of = [&](auto is) {
    if (!value.is_array()) return false;
    for (const auto& item : value)
      if (!is(item)) return false;
    return true;
  };
  const auto is_int = [](const nlohmann::json& v) { return v.is_number_integer(); };
  const auto is_string = [](const nlohmann::json& v) { return v.is_string(); };
  static const std::set<std::string> kInts = {"rank_at_least",    "runtime_inputs",
                                              "const_nonzero_at", "last_dim_not_multiple_of",
                                              "version_above",    "inputs_above"};
  static const std::set<std::string> kBools = {"identical_inputs", "dynamic_shape", "broadcast",
                                               "elementwise_const_batched", "builtin_op"};
  static const std::set<std::string> kNames = {"dtype_any", "input_dtype", "output_dtype", "not_ops",
                                               "runtime_dtype_any"};
  static const std::set<std::string> kObjects = {"attrs", "attrs_not", "winograd_4x4", "rows_above"};
  if (kInts.count(key)) return is_int(value) ? "" : "takes an integer";
  if (kBools.count(key)) return value.is_boolean() ? "" : "takes true or false";
  if (kNames.count(key)) return list_of(is_string) ? "" : "takes a list of names";
  if (kObjects.count(key)) return value.is_object() ? "" : "takes an object";
  if (key == "runtime_input_at" || key == "const_input_at")
    return is_int(value) || list_of(is_int) ? "" : "takes an input position or a list of them";
  if (key == "input_from_op") return value.is_string() ? "" : "takes an op name";
  if (key == "input_quant") {
    if (!value.is_object() || !value.contains("in") || !value["in"].is_array() ||
        (value.contains("input") && !is_int(value["input"])))
      return "takes {input, in: [none|per-tensor|per-channel]}";
    for (const auto& v : value["in"])
      if (v != "none" && v != "per-tensor" && v != "per-channel") return "'in' takes none, per-tensor or per-channel";
    return "";
  }
  if (key == "input_rank" || key == "dtype_at" || key == "quantized_dimension_at") {
    const bool ranks = key != "dtype_at";
    if (!value.is_object() || !value.contains("in") || (value.contains("input") && !is_int(value["input"])))
      return ranks ? "takes {input, in: [ranks]}" : "takes {input, in: [dtypes]}";
    const nlohmann::json& in = value["in"];
    const bool ok = in.is_array() && std::all_of(in.begin(), in.end(), [&](const nlohmann::json& v) {
                      return ranks ? is_int(v) : is_string(v);
                    });
    return ok ? "" : (ranks ? "'in' takes a list of ranks" : "'in' takes a list of dtype names");
  }
  return "";
}

namespace {

bool InList(const nlohmann::json& list, std::string_view name) {
  for (const auto& item : list)
    if (item.is_string() && item.get<std::string>() == name) return true;
  return false;
}

std::string_view DTypeOf(const ir::Subgraph& g, int tensor) { return ir::DTypeName(g.tensors[tensor].dtype); }

bool ConstHasNonZero(const ir::Tensor& tensor) {
  if (!tensor.data) return false;
  const uint8_t* bytes = tensor.data->data();
  const size_t size = tensor.data->size();
  // -0.0 is a zero pad value too.
  if (tensor.dtype == tfl::TensorType_FLOAT32) {
    for (size_t i = 0; i + 4 <= size; i += 4) {
      float v;
      std::memcpy(&v, bytes + i, 4);
      if (v != 0.0f) return true;
    }
    return false;
  }
  if (tensor.dtype == tfl::TensorType_FLOAT16) {
    for (size_t i = 0; i + 2 <= size; i += 2) {
      uint16_t v;
      std::memcpy(&v, bytes + i, 2);
      if ((v & 0x7fff) != 0) return true;
    }
    return false;
  }
  for (size_t i = 0; i < size; ++i)
    if (bytes[i] != 0) return true;
  return false;
}

std::vector<int> Positions(const nlohmann::json& value) {
  std::vector<int> positions;
  if (value.is_number_integer())
    positions.push_back(value.get<int>());
  else
    for (const auto& v : value) positions.push_back(v.get<int>());
  return positions;
}

bool OneConstraint(const GraphView& view, int node, const std::string& key, const nlohmann::json& want) {
  const ir::Subgraph& g = view.graph;
  const ir::Op& op = g.ops[node];
  auto input_at = [&](int position) {
    return position < static_cast<int>(op.inputs.size()) ? op.inputs[position] : -1;
  };
  auto all_tensors = [&] {
    std::vector<int> tensors;
    for (int t : op.inputs)
      if (t >= 0) tensors.push_back(t);
    for (int t : op.outputs)
      if (t >= 0) tensors.push_back(t);
    return tensors;
  };
  if (key == "rank_at_least") {
    for (int t : all_tensors())
      if (g.tensors[t].rank() >= want.get<int>()) return true;
    return false;
  }
  if (key == "dtype_any") {
    for (int t : all_tensors())
      if (InList(want, DTypeOf(g, t))) return true;
    return false;
  }
  if (key == "input_dtype") return input_at(0) >= 0 && InList(want, DTypeOf(g, input_at(0)));
  if (key == "output_dtype")
    return !op.outputs.empty() && op.outputs[0] >= 0 && InList(want, DTypeOf(g, op.outputs[0]));
  if (key == "runtime_inputs") {
    bool any_input = std::any_of(op.inputs.begin(), op.inputs.end(), [](int t) { return t >= 0; });
    return any_input && view.RuntimeInputCount(node) == want.get<int>();
  }
  if (key == "runtime_input_at") {
    for (int p : Positions(want))
      if (input_at(p) < 0 || view.IsConstLike(input_at(p))) return false;
    return true;
  }
  if (key == "const_input_at") {
    for (int p : Positions(want))
      if (input_at(p) < 0 || !view.IsConstLike(input_at(p))) return false;
    return true;
  }
  if (key == "identical_inputs") {
    bool identical = false;
    for (size_t i = 0; i < op.inputs.size(); ++i)
      for (size_t j = i + 1; j < op.inputs.size(); ++j)
        if (op.inputs[i] >= 0 && op.inputs[i] == op.inputs[j]) identical = true;
    return identical == want.get<bool>();
  }
  if (key == "dynamic_shape") {
    bool dynamic = false;
    for (int t : all_tensors()) dynamic = dynamic || view.IsDynamic(t);
    return dynamic == want.get<bool>();
  }
  if (key == "attrs") {
    for (const auto& [field, value] : want.items())
      if (OptionValue(op, field) != value) return false;
    return true;
  }
  if (key == "version_above") return op.version > want.get<int>();
  if (key == "inputs_above")
    return std::count_if(op.inputs.begin(), op.inputs.end(), [](int t) { return t >= 0; }) > want.get<int>();
  if (key == "attrs_not") {
    for (const auto& [field, value] : want.items())
      if (OptionValue(op, field) != value) return true;
    return false;
  }
  if (key == "input_rank") {
    const int t = input_at(want.value("input", 0));
    if (t < 0) return false;
    for (const auto& rank : want.at("in"))
      if (rank.is_number_integer() && rank.get<int>() == g.tensors[t].rank()) return true;
    return false;
  }
  if (key == "dtype_at") {
    const int t = input_at(want.value("input", 0));
    return t >= 0 && InList(want.at("in"), DTypeOf(g, t));
  }
  if (key == "runtime_dtype_any") {
    // Constants are exempt: the delegate filters only the tensors it computes.
    for (int t : all_tensors())
      if (!view.IsConstLike(t) && InList(want, DTypeOf(g, t))) return true;
    return false;
  }
  if (key == "const_nonzero_at") {
    int t = input_at(want.get<int>());
    return t >= 0 && g.tensors[t].is_const() && ConstHasNonZero(g.tensors[t]);
  }
  if (key == "last_dim_not_multiple_of") {
    int t = input_at(0);
    if (t < 0 || g.tensors[t].shape.empty()) return false;
    return g.tensors[t].shape.back() % want.get<int>() != 0;
  }
  if (key == "rows_above") {
    // Rows of input i as stored: the product of every dimension but the last.
    const int t = input_at(want.value("input", 0));
    if (t < 0 || g.tensors[t].shape.empty()) return false;
    int64_t rows = 1;
    for (size_t d = 0; d + 1 < g.tensors[t].shape.size(); ++d) rows *= g.tensors[t].shape[d];
    return rows > want.value("rows", int64_t{0});
  }
  if (key == "broadcast") {
    std::vector<const std::vector<int32_t>*> shapes;
    for (int t : op.inputs)
      if (t >= 0) shapes.push_back(&g.tensors[t].shape);
    bool broadcast = false;
    for (const auto* s : shapes) broadcast = broadcast || *s != *shapes.front();
    return broadcast == want.get<bool>();
  }
  if (key == "input_from_op") {
    for (int t : op.inputs)
      if (t >= 0 && view.producer[t] >= 0 && g.ops[view.producer[t]].name() == want.get<std::string>()) return true;
    return false;
  }
  if (key == "not_ops") return !InList(want, op.name());
  if (key == "input_quant") {
    const int t = input_at(want.value("input", 0));
    if (t < 0) return false;
    const size_t scales = g.tensors[t].quant.scale.size();
    return InList(want.at("in"), scales == 0 ? "none" : scales == 1 ? "per-tensor" : "per-channel");
  }
  if (key == "quantized_dimension_at") {
    // Per-channel quantization along one of the listed dimensions.
    const int t = input_at(want.value("input", 0));
    if (t < 0 || g.tensors[t].quant.scale.size() < 2) return false;
    for (const auto& dim : want.at("in"))
      if (dim.is_number_integer() && dim.get<int>() == g.tensors[t].quant.quantized_dimension) return true;
    return false;
  }
  if (key == "builtin_op") return (op.code != tfl::BuiltinOperator_CUSTOM) == want.get<bool>();
  if (key == "elementwise_const_batched") {
    // A binary elementwise op with a constant operand of rank 2 or 3 whose
    // first dimension is > 1 (the delegate reads such constants wrongly).
    bool found = false;
    if (op.inputs.size() == 2 && ir::IsBinaryElementwise(op.code))
      for (int t : op.inputs)
        if (t >= 0 && view.IsConstLike(t) && (g.tensors[t].rank() == 2 || g.tensors[t].rank() == 3) &&
            g.tensors[t].shape[0] > 1)
          found = true;
    return found == want.get<bool>();
  }
  if (key == "winograd_4x4") {
    // ML Drift's Winograd F(4x4, 3x3) choice: a 3x3, stride-1, undilated
    // CONV_2D with at least min_slices 4-channel slices in and out and at
    // least min_tiles 4x4 output tiles.
    if (op.code != tfl::BuiltinOperator_CONV_2D || op.inputs.size() < 2 || op.outputs.empty()) return false;
    const auto* o = op.options.AsConv2DOptions();
    const int w = input_at(1), y = op.outputs[0];
    if (!o || w < 0 || y < 0 || g.tensors[w].rank() != 4 || g.tensors[y].rank() != 4) return false;
    if (o->stride_w != 1 || o->stride_h != 1 || o->dilation_w_factor != 1 || o->dilation_h_factor != 1) return false;
    const std::vector<int32_t>& filter = g.tensors[w].shape;  // [O, 3, 3, I]
    const std::vector<int32_t>& out = g.tensors[y].shape;     // [N, H, W, O]
    if (filter[1] != 3 || filter[2] != 3) return false;
    const auto slices = [](int64_t c) { return (c + 3) / 4; };
    const int64_t min_slices = want.value("min_slices", 16), min_tiles = want.value("min_tiles", 32);
    return slices(filter[0]) >= min_slices && slices(filter[3]) >= min_slices &&
           slices(out[1]) * slices(out[2]) >= min_tiles;
  }
  ThrowInternal("lint: constraint '" + key + "' has no matcher");
}

}  // namespace

bool Matches(const GraphView& view, int node, const nlohmann::json& when) {
  for (const auto& [key, want] : when.items())
    if (!OneConstraint(view, node, key, want)) return false;
  return true;
}

}  // namespace gpuclean::lint
