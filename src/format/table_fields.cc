#include "format/table_fields.h"

#include <fmt/format.h>

namespace gpuclean::format {
namespace {

const flatbuffers::TypeTable* UnionMember(const flatbuffers::TypeTable* union_type, int member) {
  if (!union_type || member <= 0 || static_cast<size_t>(member) >= union_type->num_elems) return nullptr;
  const flatbuffers::TypeCode& code = union_type->type_codes[member];
  if (code.sequence_ref < 0) return nullptr;
  return union_type->type_refs[code.sequence_ref]();
}

}  // namespace

std::string UnknownFieldIn(const flatbuffers::Table* table, const flatbuffers::TypeTable* type) {
  if (!table || !type) return {};
  const uint8_t* vtable = table->GetVTable();
  const auto vtable_size = flatbuffers::ReadScalar<flatbuffers::voffset_t>(vtable);
  const size_t slots = vtable_size >= 4 ? (vtable_size - 4) / sizeof(flatbuffers::voffset_t) : 0;
  for (size_t slot = type->num_elems; slot < slots; ++slot) {
    const auto field_offset = flatbuffers::ReadScalar<flatbuffers::voffset_t>(vtable + 4 + 2 * slot);
    if (field_offset != 0) return fmt::format("field #{}", slot);
  }
  return {};
}

std::string UnknownOptionField(const void* table, tfl::BuiltinOptions type) {
  return UnknownFieldIn(static_cast<const flatbuffers::Table*>(table),
                        UnionMember(tfl::BuiltinOptionsTypeTable(), static_cast<int>(type)));
}

std::string UnknownOption2Field(const void* table, tfl::BuiltinOptions2 type) {
  return UnknownFieldIn(static_cast<const flatbuffers::Table*>(table),
                        UnionMember(tfl::BuiltinOptions2TypeTable(), static_cast<int>(type)));
}

std::string TypeName(const flatbuffers::TypeTable* type) {
  // Mini-reflection keeps field names but not the table's own name.
  if (type == tfl::ModelTypeTable()) return "Model";
  if (type == tfl::SubGraphTypeTable()) return "SubGraph";
  if (type == tfl::TensorTypeTable()) return "Tensor";
  if (type == tfl::OperatorTypeTable()) return "Operator";
  if (type == tfl::OperatorCodeTypeTable()) return "OperatorCode";
  if (type == tfl::QuantizationParametersTypeTable()) return "QuantizationParameters";
  if (type == tfl::MetadataTypeTable()) return "Metadata";
  if (type == tfl::SignatureDefTypeTable()) return "SignatureDef";
  if (type == tfl::TensorMapTypeTable()) return "TensorMap";
  return "table";
}

}  // namespace gpuclean::format
