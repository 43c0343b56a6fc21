#pragma once
// --input-shape, shared by the commands that run a model (run, bisect, check,
// fix, split).
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "gpuclean/format.h"
#include "gpuclean/run.h"

namespace gpuclean::cli {

inline void AddInputShapeFlag(CLI::App* cmd, std::vector<std::string>& specs) {
  cmd->add_option("--input-shape", specs,
                  "KEY=d0,d1,... run input KEY (index or name) at this shape (repeatable); only dimensions "
                  "that shape_signature marks -1 can change. Default: the stored shape, as LiteRT runs it");
}

// The model at `path` with --input-shape applied.
inline ir::Model ReadModelAtShapes(const std::string& path, const std::vector<std::string>& specs) {
  return exec::WithInputShapes(format::ReadModel(path), exec::ParseInputShapes(specs));
}

}  // namespace gpuclean::cli
