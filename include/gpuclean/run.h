#pragma once
// `gpuclean run`: feed a model (given or generated inputs), run it, write
// out<i>.npy, in<i>.npy for generated inputs, meta.json and optional taps.
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "gpuclean/exec.h"

namespace gpuclean::exec {

struct RunRequest {
  std::string model_path;
  std::vector<std::pair<std::string, std::string>> inputs;  // KEY (index or name) -> .npy path
  uint32_t seed = 0;
  Precision precision = Precision::kFp32;
  int threads = 1;
  int repeat = 1;
  std::string out_dir;
  std::string dump_dir;  // empty: no tensor dump
};

// Returns meta.json's content (also written to out_dir/meta.json).
nlohmann::json RunToFolder(const RunRequest& request);

// Peak resident set size of this process in bytes (VmHWM).
size_t PeakRssBytes();

}  // namespace gpuclean::exec
