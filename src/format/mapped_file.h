#pragma once
#include <memory>
#include <string>

#include "gpuclean/bytes.h"

namespace gpuclean::format {

// Maps a whole file read-only. The returned Bytes keeps the mapping alive.
Bytes MapFile(const std::string& path);

}  // namespace gpuclean::format
