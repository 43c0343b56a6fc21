#pragma once
// The format layer: .tflite bytes <-> ir::Model. Nothing else touches bytes.
#include <cstdint>
#include <string>
#include <vector>

#include "gpuclean/bytes.h"
#include "gpuclean/ir.h"

namespace gpuclean::format {

// Memory-maps `path`, verifies the flatbuffer and every index in it, and
// builds the IR. Constant data stays in the map (no copies). Throws
// Error(kBadInput) with one line naming the file and the problem.
ir::Model ReadModel(const std::string& path);
// The same over bytes already in memory; `source` names them in messages.
ir::Model ReadModelBytes(Bytes bytes, const std::string& source);

struct WriteOptions {
  // Store constant data after the flatbuffer (Buffer.offset/size) instead of
  // inside it. Chosen automatically when the data would not fit in 2 GB.
  bool external_buffers = false;
};

// Serialises the model. Refuses (Error kUnsupported) when the model carries
// anything the reader could not understand, rather than drop it.
std::vector<uint8_t> Serialize(const ir::Model& model, const WriteOptions& options = {});
// Serialises to `path` atomically (temporary file + rename). Refuses to
// overwrite the file the model was read from.
void WriteModel(const ir::Model& model, const std::string& path, const WriteOptions& options = {});

}  // namespace gpuclean::format
