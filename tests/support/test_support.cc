#include "support/test_support.h"
#include "support/arrays.h"

#include <cstring>

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

#include "gpuclean/format.h"
#include "gpuclean/probe.h"

namespace gpuclean::testing {
namespace fs = std::filesystem;

std::string SourceDir() { return GPUCLEAN_SOURCE_DIR; }

nlohmann::json ReadJsonFile(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

int CountLines(const std::string& text) { return static_cast<int>(std::count(text.begin(), text.end(), '\n')); }

fs::path OnnxCache() { return fs::path(SourceDir()) / ".cache" / "onnx"; }

std::vector<std::string> FixtureModels() {
  std::vector<std::string> models;
  const fs::path dir = fs::path(SourceDir()) / ".cache" / "models";
  if (fs::is_directory(dir))
    for (const auto& entry : fs::directory_iterator(dir))
      if (entry.path().extension() == ".tflite") models.push_back(entry.path().string());
  std::sort(models.begin(), models.end());
  if (models.empty()) ADD_FAILURE() << "no fixture models in " << dir << ": run tools/fetch_models.sh";
  return models;
}

std::string FixtureModel(const std::string& file_name) {
  const fs::path path = fs::path(SourceDir()) / ".cache" / "models" / file_name;
  if (!fs::exists(path)) ADD_FAILURE() << "fixture " << path << " missing: run tools/fetch_models.sh";
  return path.string();
}

std::string ZooModel(const std::string& file_name) {
  const fs::path path = fs::path(SourceDir()) / ".cache" / "zoo" / file_name;
  if (!fs::exists(path)) ADD_FAILURE() << "model " << path << " missing: run tools/fetch_models.sh";
  return path.string();
}

TempDir::TempDir() {
  static int counter = 0;
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = info ? std::string(info->test_suite_name()) + "." + info->name() : "gpuclean";
  std::replace(name.begin(), name.end(), '/', '_');
  path_ = fs::temp_directory_path() /
          ("gpuclean-test-" + std::to_string(getpid()) + "-" + std::to_string(counter++) + "-" + name);
  fs::remove_all(path_);
  fs::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

static std::string ReadAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

CommandResult RunCommand(const std::string& command_line) {
  TempDir capture;
  const std::string out = capture.file("stdout"), err = capture.file("stderr");
  const std::string full = command_line + " >" + ShellQuote(out) + " 2>" + ShellQuote(err) + " </dev/null";
  int status = std::system(full.c_str());
  CommandResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = ReadAll(out);
  r.err = ReadAll(err);
  return r;
}

CommandResult RunGpuclean(const std::string& args) { return RunCommand(ShellQuote(GPUCLEAN_BINARY) + " " + args); }

static std::string Harness() { return ShellQuote((fs::path(SourceDir()) / "probe" / "litert_run.mjs").string()); }

std::vector<npy::Array> RunLiteRt(const std::string& model, const std::vector<npy::Array>& inputs) {
  probe::CheckTestLane(probe::Runtime::kLiteRtWasm);
  TempDir dir;
  std::string cmd = "node " + Harness() + " " + ShellQuote(model);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string file = dir.file("in" + std::to_string(i) + ".npy");
    npy::Write(file, inputs[i]);
    cmd += " --input " + std::to_string(i) + "=" + ShellQuote(file);
  }
  const std::string out_dir = dir.file("out");
  cmd += " --out " + ShellQuote(out_dir);
  CommandResult r = RunCommand(cmd);
  if (r.exit_code != 0) throw std::runtime_error("LiteRT.js failed on " + model + ": " + r.err);
  std::vector<npy::Array> outputs;
  for (int i = 0; fs::exists(out_dir + "/out" + std::to_string(i) + ".npy"); ++i)
    outputs.push_back(npy::Read(out_dir + "/out" + std::to_string(i) + ".npy"));
  return outputs;
}

std::string DescribeLiteRt(const std::string& model) {
  probe::CheckTestLane(probe::Runtime::kLiteRtWasm);
  CommandResult r = RunCommand("node " + Harness() + " " + ShellQuote(model) + " --describe");
  if (r.exit_code != 0) throw std::runtime_error("LiteRT.js --describe failed on " + model + ": " + r.err);
  return r.out;
}

std::vector<npy::Array> MakeInputs(const std::string& model_path, uint32_t seed) {
  ir::Model model = format::ReadModel(model_path);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  std::vector<npy::Array> inputs;
  for (int32_t t : model.main().inputs) {
    const ir::Tensor& tensor = model.main().tensors[t];
    npy::Array a;
    a.dtype = tensor.dtype;
    a.shape.assign(tensor.shape.begin(), tensor.shape.end());
    a.data.resize(static_cast<size_t>(a.num_elements()) * ir::DTypeSize(tensor.dtype));
    if (tensor.dtype == tfl::TensorType_FLOAT32) {
      for (int64_t i = 0; i < a.num_elements(); ++i) a.as<float>()[i] = unit(rng);
    } else if (tensor.dtype == tfl::TensorType_INT32) {
      for (int64_t i = 0; i < a.num_elements(); ++i) a.as<int32_t>()[i] = static_cast<int32_t>(rng() % 4);
    } else {
      for (auto& b : a.data) b = static_cast<uint8_t>(rng() & 1);
    }
    inputs.push_back(std::move(a));
  }
  return inputs;
}

}  // namespace gpuclean::testing
