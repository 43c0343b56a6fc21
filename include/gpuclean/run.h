#pragma once
// `gpuclean run`: feed a model (given or generated inputs), run it, write
// out<i>.npy, in<i>.npy for generated inputs, meta.json and optional taps.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpuclean/exec.h"
#include "gpuclean/image.h"

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
  std::string dump_dir;       // empty: no tensor dump
  image::ImageInputs images;  // photographs; written to out_dir/in<i>.npy like generated inputs
};

// Returns meta.json's content (also written to out_dir/meta.json).
nlohmann::json RunToFolder(const RunRequest& request);

// The graph input a --input KEY names (an index or a tensor name); throws
// Error(kUsage) when there is none.
int ResolveInputKey(const ir::Subgraph& graph, const std::string& key);

// Every graph input's value: the given files (KEY=path) read and checked,
// photographs loaded (image::LoadImageInput), constants `convert`/`fix`
// moved out of the file read from beside `model_path` (HostInputBeside),
// the rest generated with GenerateInput(seed).
std::vector<npy::Array> PrepareInputs(const ir::Subgraph& graph,
                                      const std::vector<std::pair<std::string, std::string>>& given, uint32_t seed,
                                      const image::ImageInputs& images = {}, const std::string& model_path = "");

// Where `convert` and `fix` write the value of host-fed input `name` of a
// model written to `model_path`: <model_path minus .tflite>.<name, with '/',
// ':' and ' ' as '_'>.npy.
std::string HostInputPath(const std::string& model_path, const std::string& name);

// That file's value for graph input `t` of the model at `model_path`, when
// the file exists (Error(kUsage) when its dtype or shape is not the
// input's); nullopt otherwise.
std::optional<npy::Array> HostInputBeside(const std::string& model_path, const ir::Tensor& t);

// The input index each photograph goes to and its value. An empty key takes
// the first input that looks like an image; Error(kUsage) when none does,
// when two photographs name one input or when `npy_keys` (the --input
// keys) names it too.
std::vector<std::pair<int, npy::Array>> LoadImageInputs(const ir::Subgraph& graph, const image::ImageInputs& images,
                                                        const std::vector<std::string>& npy_keys = {});

// A copy of a runtime tensor's values.
npy::Array ToArray(const Tensor& tensor);

// Peak resident set size of this process in bytes (VmHWM).
size_t PeakRssBytes();

}  // namespace gpuclean::exec
