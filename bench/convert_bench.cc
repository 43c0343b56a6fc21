// Speed and cost of `gpuclean convert`, per ONNX fixture (.cache/onnx/*.onnx):
// the conversion (with the proof against onnxruntime) runs in its own child
// process (`gpuclean convert --json`), so its time and peak RSS are that
// model's alone; then the converted graph on our interpreter at 1 thread
// (`gpuclean run --threads 1`) against onnxruntime CPU at 1 intra-op thread
// on the original .onnx (probe/onnx_run.mjs --threads 1), same input file,
// in the same invocation. Both report run_ms: the median of runs 2..N.
// With --rounds R the two take turns R times and the median of the R
// medians is kept, so a change in machine load hits both alike.
//
// Then the converted graph's largest dot-product layers are timed on our
// interpreter (in this process, same input, same threads) and reported as
// GFLOP/s and as a fraction of the machine's sgemm peak, measured here too
// (the better of OpenBLAS and oneDNN, 1 thread, 1024^3; per thread at T threads).
//
// A model that does not convert (exit 2) is reported as 'not converted' with
// its error line; a failed proof (exit 1) as 'proof failed'. Neither stops
// the run.
//
// usage: gpuclean_convert_bench [--repeat N] [--rounds R] [--threads T] [--json FILE] [--no-prove] [MODEL.onnx...]
//   --threads T   both runtimes at T threads (default 1)
//   --json FILE   also write the results as JSON to FILE; '-': JSON on stdout instead of the table
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "gpuclean/npy.h"
#include "layer_profile.h"
#include "sgemm_peak.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string Quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string FirstLine(const std::string& text) {
  std::string line;
  std::istringstream in(text);
  while (std::getline(in, line))
    if (!line.empty() && line.rfind("convert: ", 0) != 0 && line.rfind("gpuclean: note:", 0) != 0) return line;
  return "(no message)";
}

struct Ran {
  int exit_code = -1;
  std::string out, err;
};

// Runs `command` in a child shell, stdout and stderr to files under `dir`.
Ran Run(const std::string& command, const fs::path& dir, const std::string& tag) {
  const fs::path out = dir / (tag + ".stdout"), err = dir / (tag + ".stderr");
  const int status = std::system((command + " >" + Quote(out.string()) + " 2>" + Quote(err.string())).c_str());
  Ran r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  r.out = ReadFile(out);
  r.err = ReadFile(err);
  return r;
}

double RunMs(const std::string& command, const fs::path& dir, const std::string& tag, const fs::path& out_dir) {
  fs::remove_all(out_dir);
  const Ran r = Run(command, dir, tag);
  if (r.exit_code != 0)
    throw std::runtime_error(fmt::format("{} failed (exit {}): {}", tag, r.exit_code, FirstLine(r.err)));
  return json::parse(ReadFile(out_dir / "meta.json"))["run_ms"].get<double>();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = 10, rounds = 1, threads = 1;
  bool prove = true;
  std::string json_path;
  std::vector<std::string> models;
  if (argc == 2 && std::string(argv[1]) == "--sgemm-peak-child") return gpuclean::bench::SgemmPeakChild();
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--repeat" && i + 1 < argc)
      repeat = std::max(2, std::atoi(argv[++i]));
    else if (a == "--rounds" && i + 1 < argc)
      rounds = std::max(1, std::atoi(argv[++i]));
    else if (a == "--threads" && i + 1 < argc)
      threads = std::max(1, std::atoi(argv[++i]));
    else if (a == "--json" && i + 1 < argc)
      json_path = argv[++i];
    else if (a == "--no-prove")
      prove = false;
    else if (a == "--help") {
      std::cout << "usage: gpuclean_convert_bench [--repeat N] [--rounds R] [--threads T] [--json FILE|-] [--no-prove] "
                   "[MODEL.onnx...]\n";
      return 0;
    } else
      models.push_back(a);
  }
  const fs::path root = GPUCLEAN_SOURCE_DIR;
  if (models.empty() && fs::is_directory(root / ".cache/onnx"))
    for (const auto& e : fs::directory_iterator(root / ".cache/onnx"))
      if (e.path().extension() == ".onnx") models.push_back(e.path().string());
  if (models.empty()) {
    std::cerr << "gpuclean_convert_bench: no models (run tools/fetch_onnx_fixtures.sh)\n";
    return 2;
  }
  std::sort(models.begin(), models.end());
  const std::string gpuclean = GPUCLEAN_BINARY;
  const std::string harness = (root / "probe/onnx_run.mjs").string();
  const fs::path work = fs::temp_directory_path() / fmt::format("gpuclean-convert-bench-{}", getpid());
  fs::create_directories(work);

  const double peak_gflops = gpuclean::bench::MeasureSgemmPeakGflops() * threads;
  std::cerr << fmt::format(
      "convert_bench: sgemm peak (best of OpenBLAS and oneDNN, 1024^3) {:.1f} GFLOP/s at {} thread(s)\n", peak_gflops,
      threads);
  json results = json::array();
  int slower = 0, measured = 0;
  for (const std::string& path : models) {
    const std::string stem = fs::path(path).stem().string();
    const fs::path dir = work / stem;
    fs::create_directories(dir);
    json r = {{"model", stem}, {"onnx", path}};
    std::cerr << "convert_bench: " << stem << ": converting\n";
    const fs::path tflite = dir / (stem + ".tflite");
    const Ran conv = Run(fmt::format("{} convert {} -o {} --json -q{}", Quote(gpuclean), Quote(path),
                                     Quote(tflite.string()), prove ? "" : " --no-prove"),
                         dir, "convert");
    r["convert_exit"] = conv.exit_code;
    if (conv.exit_code == 0 || conv.exit_code == 1) {
      try {
        const json report = json::parse(conv.out);
        r["convert_ms"] = report["time_ms"]["total"];
        r["convert_time_ms"] = report["time_ms"];
        r["peak_rss_bytes"] = report["peak_rss_bytes"];
        r["proven"] = report.value("proven", false);
        r["tflite_bytes"] = report.value("tflite_bytes", 0);
      } catch (const std::exception& e) {
        r["status"] = "convert output unreadable";
        r["error"] = e.what();
      }
    }
    if (conv.exit_code == 1) {
      // Exit 1 is a failed proof, or a proven model lint still flags for the
      // default target (the RF-DETR-Seg fixtures need --host-ops auto).
      r["status"] = r.value("proven", false) ? "not GPU-clean" : "proof failed";
      r["error"] = FirstLine(conv.err);
    } else if (conv.exit_code != 0) {
      r["status"] = "not converted";
      r["error"] = FirstLine(conv.err);
    }
    if (conv.exit_code == 0 && !r.contains("status")) {
      // The same input file for both: the fixture's when it has one, else
      // the one onnxruntime generates (seed 0) and writes.
      std::string input_flag;
      std::vector<std::string> input_files;
      const fs::path fixture_input = fs::path(path).parent_path() / (stem + ".input.npy");
      if (fs::exists(fixture_input)) {
        input_flag = " --input 0=" + Quote(fixture_input.string());
        input_files.push_back(fixture_input.string());
      }
      std::vector<double> ours, theirs;
      // A sub-millisecond model's median of a few runs is mostly the
      // scheduler's noise (mha_parity read 0.96-1.20 from run to run): after
      // the first round, both runtimes repeat enough runs to fill about
      // kMinRoundMs, and that round is timed again.
      constexpr double kMinRoundMs = 200;
      constexpr int kMaxRepeat = 400;
      int model_repeat = repeat;
      bool rescaled = false;
      try {
        for (int round = 0; round < rounds; ++round) {
          std::cerr << fmt::format("convert_bench: {}: timing, round {}/{} ({} runs each)\n", stem, round + 1, rounds,
                                   model_repeat);
          const fs::path ort_out = dir / "ort", ours_out = dir / "ours";
          theirs.push_back(RunMs(fmt::format("node {} {}{} --threads {} --repeat {} --out {}", Quote(harness),
                                             Quote(path), input_flag, threads, model_repeat, Quote(ort_out.string())),
                                 dir, "onnxruntime", ort_out));
          if (input_flag.empty()) {
            for (int i = 0; fs::exists(ort_out / fmt::format("in{}.npy", i)); ++i) {
              const fs::path copy = dir / fmt::format("in{}.npy", i);
              fs::copy_file(ort_out / fmt::format("in{}.npy", i), copy, fs::copy_options::overwrite_existing);
              input_flag += fmt::format(" --input {}={}", i, Quote(copy.string()));
              input_files.push_back(copy.string());
            }
          }
          ours.push_back(
              RunMs(fmt::format("{} run {}{} --threads {} --repeat {} --out {}", Quote(gpuclean),
                                Quote(tflite.string()), input_flag, threads, model_repeat, Quote(ours_out.string())),
                    dir, "ours", ours_out));
          const double slower_ms = std::max(ours.back(), theirs.back());
          const int wanted = std::min(kMaxRepeat, static_cast<int>(std::ceil(kMinRoundMs / std::max(slower_ms, 1e-3))));
          if (!rescaled && wanted > model_repeat) {
            rescaled = true;
            model_repeat = wanted;
            ours.clear();
            theirs.clear();
            round = -1;
          }
        }
        r["repeat"] = model_repeat;
        r["ours_ms"] = Median(ours);
        r["onnxruntime_ms"] = Median(theirs);
        r["ours_ms_rounds"] = ours;
        r["onnxruntime_ms_rounds"] = theirs;
        const double ratio = r["ours_ms"].get<double>() / r["onnxruntime_ms"].get<double>();
        r["ratio"] = ratio;
        r["status"] = ratio <= 1 ? "ok" : "slower";
        ++measured;
        if (ratio > 1) ++slower;
        std::vector<gpuclean::npy::Array> inputs;
        for (const std::string& file : input_files) inputs.push_back(gpuclean::npy::Read(file));
        json layers = json::array();
        for (const gpuclean::bench::Layer& l :
             gpuclean::bench::LargestLayers(tflite.string(), inputs, repeat, threads)) {
          layers.push_back({{"op", l.op},
                            {"name", l.name},
                            {"mflop", l.flops / 1e6},
                            {"ms", l.ms},
                            {"gflops", l.gflops()},
                            {"sgemm_peak_fraction", l.gflops() / peak_gflops}});
        }
        r["largest_layers"] = layers;
      } catch (const std::exception& e) {
        r["status"] = "not timed";
        r["error"] = e.what();
      }
    }
    results.push_back(r);
  }
  fs::remove_all(work);

  const json doc = {{"repeat", repeat}, {"rounds", rounds}, {"threads", threads}, {"sgemm_peak_gflops", peak_gflops},
                    {"prove", prove},   {"models", results}};
  if (json_path == "-") {
    std::cout << doc.dump(2) << "\n";
    return 0;
  }
  if (!json_path.empty()) std::ofstream(json_path) << doc.dump(2) << "\n";
  fmt::print("{:<30} {:>11} {:>9} {:>10} {:>10} {:>7} {:>11}  {}\n", "model", "convert ms", "peak RSS", "ours ms",
             "ort ms", "ratio", "top layer", "verdict");
  for (const json& r : results) {
    const auto num = [&](const char* key, const char* f) {
      return r.contains(key) ? fmt::format(fmt::runtime(f), r[key].get<double>()) : std::string("-");
    };
    const std::string rss =
        r.contains("peak_rss_bytes") ? fmt::format("{:.0f}MB", r["peak_rss_bytes"].get<double>() / 1048576.0) : "-";
    std::string verdict = r["status"].get<std::string>();
    if (verdict == "ok")
      verdict = "ok (<= 1)";
    else if (verdict == "slower")
      verdict = "SLOWER than onnxruntime";
    if (r.contains("error")) verdict += ": " + r["error"].get<std::string>();
    std::string top = "-";
    if (r.contains("largest_layers") && !r["largest_layers"].empty())
      top = fmt::format("{:.0f}% peak", 100 * r["largest_layers"][0]["sgemm_peak_fraction"].get<double>());
    fmt::print("{:<30} {:>11} {:>9} {:>10} {:>10} {:>7} {:>11}  {}\n", r["model"].get<std::string>(),
               num("convert_ms", "{:.0f}"), rss, num("ours_ms", "{:.2f}"), num("onnxruntime_ms", "{:.2f}"),
               num("ratio", "{:.2f}x"), top, verdict);
  }
  fmt::print("\nlargest dot-product layers (ours, {} thread(s); sgemm peak {:.1f} GFLOP/s measured now):\n", threads,
             peak_gflops);
  for (const json& r : results)
    for (const json& l : r.value("largest_layers", json::array()))
      fmt::print("{:<30} op {:>4} {:<22} {:>9.1f} MFLOP {:>8.3f} ms {:>7.1f} GFLOP/s {:>5.0f}% of peak\n",
                 r["model"].get<std::string>(), l["op"].get<int>(), l["name"].get<std::string>(),
                 l["mflop"].get<double>(), l["ms"].get<double>(), l["gflops"].get<double>(),
                 100 * l["sgemm_peak_fraction"].get<double>());
  fmt::print(
      "\nconvert ms and peak RSS: `gpuclean convert{}` in its own process (import + lower + proof); ours: "
      "interpreter, {} thread(s), on the converted .tflite; ort: onnxruntime-node CPU EP, {} intra-op thread(s), on "
      "the .onnx; same input; median of runs 2..{} (first is warm-up){}\n",
      prove ? "" : " --no-prove", threads, threads, repeat,
      rounds > 1 ? fmt::format(", median over {} alternating rounds", rounds) : "");
  fmt::print("{} of {} timed models slower than onnxruntime at {} thread(s) (target: ratio <= 1)\n", slower, measured,
             threads);
  return 0;
}
