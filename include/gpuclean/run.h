#pragma once
// `gpuclean run`: feed a model (given or generated inputs), run it, write
// out<i>.npy, in<i>.npy for generated inputs, meta.json and optional taps.
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "gpuclean/exec.h"

namespace gpuclean::exec {

// `--input-shape KEY=d0,d1,...`: the shape to run graph input KEY (an index
// or a name) at instead of its stored one.
struct InputShape {
  std::string key;
  std::vector<int32_t> dims;
};
// Parses KEY=d0,d1,... values; Error(kUsage) naming the bad one.
std::vector<InputShape> ParseInputShapes(const std::vector<std::string>& specs);

// A copy of `model` whose main-subgraph inputs have the given shapes, with
// every computed tensor's shape inferred anew (by preparing the interpreter
// on it). Only dimensions that shape_signature marks dynamic (-1) may change,
// and ranks must match; Error(kUsage) otherwise. A model with dynamic
// dimensions and no --input-shape runs at its stored shape, as LiteRT does.
ir::Model WithInputShapes(const ir::Model& model, const std::vector<InputShape>& shapes);

struct RunRequest {
  std::string model_path;
  std::vector<std::pair<std::string, std::string>> inputs;  // KEY (index or name) -> .npy path
  std::vector<InputShape> input_shapes;
  uint32_t seed = 0;
  Precision precision = Precision::kFp32;
  int threads = 1;
  int repeat = 1;
  std::string out_dir;
  std::string dump_dir;  // empty: no tensor dump
};

// Returns meta.json's content (also written to out_dir/meta.json).
nlohmann::json RunToFolder(const RunRequest& request);

// The graph input a --input KEY names (an index or a tensor name); throws
// Error(kUsage) when there is none.
int ResolveInputKey(const ir::Subgraph& graph, const std::string& key);

// Every graph input's value: the given files (KEY=path) read and checked,
// the rest generated with GenerateInput(seed).
std::vector<npy::Array> PrepareInputs(const ir::Subgraph& graph,
                                      const std::vector<std::pair<std::string, std::string>>& given, uint32_t seed);

// A copy of a runtime tensor's values.
npy::Array ToArray(const Tensor& tensor);

// Peak resident set size of this process in bytes (VmHWM).
size_t PeakRssBytes();

}  // namespace gpuclean::exec
