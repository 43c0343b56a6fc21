#pragma once
// Detects fields a file sets that our schema does not declare. flatbuffers
// readers skip such fields silently; a writer built on them would drop them,
// so the reader records them and the writer refuses.
#include <flatbuffers/flatbuffers.h>
#include <flatbuffers/minireflect.h>

#include <string>

#include "gpuclean/tflite_generated.h"

namespace gpuclean::format {

// Empty when every field set in `table` is one `type` declares; otherwise
// names the first unknown vtable slot.
std::string UnknownFieldIn(const flatbuffers::Table* table, const flatbuffers::TypeTable* type);
// The same for the table behind a BuiltinOptions / BuiltinOptions2 union value.
std::string UnknownOptionField(const void* table, tfl::BuiltinOptions type);
std::string UnknownOption2Field(const void* table, tfl::BuiltinOptions2 type);
// The declared name of a table type, for messages.
std::string TypeName(const flatbuffers::TypeTable* type);

}  // namespace gpuclean::format
