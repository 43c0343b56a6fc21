// Per fixture model: gpuclean (1 and 2 threads) against LiteRT.js wasm
// (compat build, one thread) on the same input files, in the same
// invocation. Prints median ms, the ratio, peak RSS of each process, and the
// achieved GFLOP/s of the model's largest conv/matmul layers against an
// sgemm peak measured here too; and the cost of the fp16 emulation modes
// against fp32 on the same inputs.
//
// usage: gpuclean_model_bench [--repeat N] [MODEL.tflite...]
#include <fmt/format.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "gpuclean/exec.h"
#include "gpuclean/format.h"
#include "gpuclean/npy.h"
#include "layer_profile.h"
#include "sgemm_peak.h"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace gpuclean;

namespace {

std::string Quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

json RunAndReadMeta(const std::string& command, const std::string& out_dir) {
  const int status = std::system((command + " >/dev/null 2>" + Quote(out_dir + ".err")).c_str());
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::ifstream err(out_dir + ".err");
    std::string line;
    std::getline(err, line);
    throw std::runtime_error("failed: " + command + ": " + line);
  }
  std::ifstream in(out_dir + "/meta.json");
  return json::parse(in);
}

// Median ms of one Invoke in each numeric mode, 1 thread. The modes take
// turns run by run, so a change in machine load hits all three alike and the
// ratios stay meaningful on a busy box.
std::vector<double> InterleavedModeMedians(const std::string& path, const std::vector<npy::Array>& inputs, int repeat) {
  auto model = std::make_shared<const ir::Model>(format::ReadModel(path));
  const exec::Precision modes[3] = {exec::Precision::kFp32, exec::Precision::kFp16Storage,
                                    exec::Precision::kFp16Compute};
  std::vector<std::unique_ptr<exec::Interpreter>> its;
  for (exec::Precision m : modes) {
    its.push_back(std::make_unique<exec::Interpreter>(model, exec::InterpreterOptions{.threads = 1, .precision = m}));
    for (size_t i = 0; i < inputs.size(); ++i) its.back()->SetInput(static_cast<int>(i), inputs[i]);
    its.back()->Invoke();  // warm-up
  }
  std::vector<std::vector<double>> times(3);
  for (int r = 0; r < repeat; ++r)
    for (int m = 0; m < 3; ++m) {
      const auto start = std::chrono::steady_clock::now();
      its[m]->Invoke();
      times[m].push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
  std::vector<double> medians;
  for (auto& t : times) {
    std::sort(t.begin(), t.end());
    medians.push_back(t[t.size() / 2]);
  }
  return medians;
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = 20;
  std::vector<std::string> models;
  if (argc == 2 && std::string(argv[1]) == "--sgemm-peak-child") return bench::SgemmPeakChild();
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--repeat" && i + 1 < argc)
      repeat = std::max(2, std::atoi(argv[++i]));
    else if (a == "--help") {
      std::cout << "usage: gpuclean_model_bench [--repeat N] [MODEL.tflite...]\n";
      return 0;
    } else
      models.push_back(a);
  }
  const fs::path root = GPUCLEAN_SOURCE_DIR;
  if (models.empty())
    for (const auto& e : fs::directory_iterator(root / ".cache/models"))
      if (e.path().extension() == ".tflite") models.push_back(e.path().string());
  std::sort(models.begin(), models.end());
  const std::string gpuclean = GPUCLEAN_BINARY;
  const std::string harness = (root / "probe/litert_run.mjs").string();
  const fs::path work = fs::temp_directory_path() / fmt::format("gpuclean-bench-{}", getpid());
  fs::create_directories(work);

  const double peak_gflops = bench::MeasureSgemmPeakGflops();
  fmt::print("sgemm peak (best of OpenBLAS and oneDNN, 1 thread, 1024^3, measured now): {:.1f} GFLOP/s\n\n",
             peak_gflops);
  fmt::print("{:<40} {:>9} {:>9} {:>9} {:>7} {:>9} {:>9}\n", "model", "ours 1t", "ours 2t", "litert", "ratio",
             "RSS ours", "RSS lrt");
  std::vector<std::string> layer_lines, fp16_lines;
  int slower = 0;
  for (const std::string& path : models) {
    const std::string stem = fs::path(path).stem().string();
    const fs::path dir = work / stem;
    fs::create_directories(dir);
    ir::Model model = format::ReadModel(path);
    std::vector<npy::Array> inputs;
    std::string input_flags;
    for (size_t i = 0; i < model.main().inputs.size(); ++i) {
      inputs.push_back(exec::GenerateInput(model.main().tensors[model.main().inputs[i]], 0, static_cast<int>(i)));
      const std::string file = (dir / fmt::format("in{}.npy", i)).string();
      npy::Write(file, inputs.back());
      input_flags += fmt::format(" --input {}={}", i, Quote(file));
    }
    json ours1 = RunAndReadMeta(fmt::format("{} run {}{} --repeat {} --threads 1 --out {}", Quote(gpuclean),
                                            Quote(path), input_flags, repeat, Quote((dir / "o1").string())),
                                (dir / "o1").string());
    json ours2 = RunAndReadMeta(fmt::format("{} run {}{} --repeat {} --threads 2 --out {}", Quote(gpuclean),
                                            Quote(path), input_flags, repeat, Quote((dir / "o2").string())),
                                (dir / "o2").string());
    json theirs = RunAndReadMeta(fmt::format("node {} {}{} --repeat {} --out {}", Quote(harness), Quote(path),
                                             input_flags, repeat, Quote((dir / "lrt").string())),
                                 (dir / "lrt").string());
    const double ms1 = ours1["run_ms"], ms2 = ours2["run_ms"], lrt = theirs["run_ms"];
    if (ms1 >= lrt) ++slower;
    fmt::print("{:<40} {:>7.2f}ms {:>7.2f}ms {:>7.2f}ms {:>6.2f}x {:>7.1f}MB {:>7.1f}MB\n", stem, ms1, ms2, lrt,
               ms1 / lrt, ours1["peak_rss_bytes"].get<double>() / 1e6, theirs["peak_rss_bytes"].get<double>() / 1e6);
    // The fp16 emulation's cost against fp32 on the same inputs, measured
    // in one process with the modes interleaved.
    const std::vector<double> mode_ms = InterleavedModeMedians(path, inputs, repeat);
    fp16_lines.push_back(fmt::format("{:<40} {:>7.2f}ms {:>7.2f}ms {:>6.2f}x {:>7.2f}ms {:>6.2f}x", stem, mode_ms[0],
                                     mode_ms[1], mode_ms[1] / mode_ms[0], mode_ms[2], mode_ms[2] / mode_ms[0]));
    for (const bench::Layer& l : bench::LargestLayers(path, inputs, repeat)) {
      const double gflops = l.flops / (l.ms * 1e6);
      layer_lines.push_back(
          fmt::format("{:<40} op {:>3} {:<20} {:>8.1f} MFLOP {:>7.3f}ms {:>6.1f} GFLOP/s ({:>3.0f}% of sgemm peak)",
                      stem, l.op, l.name, l.flops / 1e6, l.ms, gflops, 100 * gflops / peak_gflops));
    }
  }
  fmt::print("\nratio = ours at 1 thread / LiteRT.js wasm (compat, 1 thread); medians of {} runs after a warm-up run\n",
             repeat - 1);
  fmt::print(
      "\nfp16 emulation cost (1 thread, same inputs, modes interleaved run by run, medians):\n{:<40} {:>9} {:>9} {:>7} "
      "{:>9} {:>7}\n",
      "model", "fp32", "fp16-st", "x fp32", "fp16-cmp", "x fp32");
  for (const auto& line : fp16_lines) fmt::print("{}\n", line);
  fmt::print("\nlargest conv/matmul layers (1 thread):\n");
  for (const auto& line : layer_lines) fmt::print("{}\n", line);
  fmt::print("\n{} of {} models slower than LiteRT.js at 1 thread\n", slower, models.size());
  fs::remove_all(work);
  return 0;
}
