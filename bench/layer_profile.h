#pragma once
// The model's largest dot-product layers (CONV_2D, DEPTHWISE_CONV_2D,
// FULLY_CONNECTED, BATCH_MATMUL by multiply-adds) timed on our interpreter,
// for the benchmarks' GFLOP/s against the machine's sgemm peak.
#include <string>
#include <vector>

#include "gpuclean/npy.h"

namespace gpuclean::bench {

struct Layer {
  int op = 0;
  std::string name;
  int64_t flops = 0;  // 2 x multiply-adds
  double ms = 0;      // median over the runs
  double gflops() const { return ms > 0 ? static_cast<double>(flops) / (ms * 1e6) : 0; }
};

// Per-op times from the interpreter's tap (called right after each op) at
// `threads`, median over `repeat` runs; the `count` layers with the most
// flops, largest first.
std::vector<Layer> LargestLayers(const std::string& tflite_path, const std::vector<npy::Array>& inputs, int repeat,
                                 int threads = 1, size_t count = 3);

}  // namespace gpuclean::bench
