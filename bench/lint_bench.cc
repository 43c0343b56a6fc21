// `gpuclean lint` on a ~25 MB model (issue 4: "well under a second"),
// against a peer measured in the same run: reading and verifying the same
// file with format::ReadModel, which every command pays first. Prints the
// median of N runs of each and the ratio.
//
// usage: gpuclean_lint_bench [--repeat N] [--target ID]
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gpuclean/builder.h"
#include "gpuclean/format.h"
#include "gpuclean/lint.h"

using namespace gpuclean;

namespace {

// 40 3x3 convs of 128 -> 128 channels with fp32 weights (~590 KB each), a
// ReLU after each and a residual ADD every other layer: ~24 MB of weights,
// ~100 nodes - a mid-size vision backbone as converters emit it.
ir::Model DeepConvStack(int layers, int channels) {
  builder::GraphBuilder b;
  int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 32, 32, channels});
  std::vector<float> w(static_cast<size_t>(channels) * 9 * channels);
  for (int i = 0; i < layers; ++i) {
    for (size_t k = 0; k < w.size(); ++k) w[k] = static_cast<float>((k * 2654435761u + i) % 1000) * 1e-5f - 5e-3f;
    const int y = b.Conv2D(x, b.ConstF32("w" + std::to_string(i), {channels, 3, 3, channels}, w),
                           b.ConstF32("b" + std::to_string(i), {channels}, std::vector<float>(channels, 0.01f)),
                           tfl::Padding_SAME, 1, 1, tfl::ActivationFunctionType_RELU);
    x = i % 2 ? b.Add(x, y) : y;
  }
  b.Output(b.Mean(x, {1, 2}, false));
  return b.Finish();
}

template <typename Fn>
double MedianMs(int repeat, Fn&& fn) {
  std::vector<double> ms;
  for (int i = 0; i < repeat; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = 7;
  std::string target = "mldrift-webgpu@2.5.3";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--repeat")
      repeat = std::max(1, std::atoi(argv[i + 1]));
    else if (flag == "--target")
      target = argv[i + 1];
  }
  const std::string path = (std::filesystem::temp_directory_path() / "gpuclean_lint_bench.tflite").string();
  format::WriteModel(DeepConvStack(40, 128), path);
  const double mb = static_cast<double>(std::filesystem::file_size(path)) / 1e6;
  const std::string compat = (std::filesystem::path(lint::DefaultDataDir()) / "compat").string();

  size_t nodes = 0, findings = 0;
  // The peer: what reading the file costs (mmap, flatbuffer verify, IR).
  const double read_ms = MedianMs(repeat, [&] { nodes = format::ReadModel(path).main().ops.size(); });
  // Everything `gpuclean lint MODEL` does in process: matrix, read, lint, render.
  const double lint_ms = MedianMs(repeat, [&] {
    const lint::Matrix matrix = lint::LoadMatrix(compat, target);
    const lint::Report report = lint::Lint(format::ReadModel(path), matrix);
    findings = report.findings.size() + lint::RenderText(report, matrix).size() * 0;
  });
  // A second peer that touches every byte: ReadModel maps the file lazily,
  // lint never reads the weights, so copying the file once is the floor any
  // tool that looks at the whole file pays.
  size_t checksum = 0;
  const double copy_ms = MedianMs(repeat, [&] {
    std::ifstream in(path, std::ios::binary);
    std::vector<char> bytes(std::filesystem::file_size(path));
    in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    for (size_t k = 0; k < bytes.size(); k += 4096) checksum += static_cast<unsigned char>(bytes[k]);
  });
  fmt::print("model: {:.1f} MB, {} nodes; target {}; median of {} runs\n", mb, nodes, target, repeat);
  fmt::print("read+verify (format::ReadModel): {:8.2f} ms\n", read_ms);
  fmt::print("lint (matrix + read + lint + text): {:8.2f} ms  ({} findings)\n", lint_ms, findings);
  fmt::print("read every byte (ifstream):       {:8.2f} ms  (checksum {})\n", copy_ms, checksum % 10);
  fmt::print("ratio lint / read+verify: {:.2f}x; lint / read every byte: {:.2f}x; lint {} one second\n",
             lint_ms / read_ms, lint_ms / copy_ms, lint_ms < 1000 ? "well under" : "NOT under");
  std::filesystem::remove(path);
  return lint_ms < 1000 ? 0 : 1;
}
