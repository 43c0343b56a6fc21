#pragma once
#include <cstdint>
#include <span>
#include <string>

namespace gpuclean {

// Writes `bytes` to a temporary file beside `path`, syncs it and renames it
// over `path`, so a reader never sees a half-written file.
void WriteFileAtomically(const std::string& path, std::span<const uint8_t> bytes);
void WriteFileAtomically(const std::string& path, const std::string& text);

}  // namespace gpuclean
