#pragma once
// Helpers shared by the test executables: fixture models, temp folders,
// running the gpuclean binary and the LiteRT.js oracle.
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuclean/npy.h"

namespace gpuclean::testing {

std::string SourceDir();
// The JSON document in a file (meta.json, a report); throws on bad JSON.
nlohmann::json ReadJsonFile(const std::string& path);
// How many '\n' the text holds: a one-line error message has one.
int CountLines(const std::string& text);
// .cache/onnx/: the exported ONNX fixtures and the real models from npm
// (tools/fetch_onnx_fixtures.sh, tools/fetch_npm_onnx.sh).
std::filesystem::path OnnxCache();
// The fixture models fetched by tools/fetch_models.sh. Fails the calling test
// (never skips) when the cache is empty.
std::vector<std::string> FixtureModels();
std::string FixtureModel(const std::string& file_name);
// A model of the wider set (.cache/zoo/: objectron, pose, face mesh) that no
// per-fixture test iterates over. Fails the calling test when missing.
std::string ZooModel(const std::string& file_name);

// A fresh folder under the build's temp dir, removed by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};
// Runs a shell command line, capturing stdout and stderr.
CommandResult RunCommand(const std::string& command_line);
// Runs the built gpuclean binary with the given argument string.
CommandResult RunGpuclean(const std::string& args);

// Runs `model` on LiteRT.js (wasm CPU) with the given inputs; returns outputs
// in model order. Throws on failure with the harness's message.
std::vector<npy::Array> RunLiteRt(const std::string& model, const std::vector<npy::Array>& inputs);
// `--describe` JSON text of the harness.
std::string DescribeLiteRt(const std::string& model);

// Deterministic inputs for a model (uniform [0,1) floats, small ints).
std::vector<npy::Array> MakeInputs(const std::string& model, uint32_t seed = 1);

std::string ShellQuote(const std::string& s);

}  // namespace gpuclean::testing
