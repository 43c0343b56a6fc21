#pragma once
// Elapsed wall time in milliseconds on the monotonic clock: the one timer
// every report's *_ms field is measured with.
#include <chrono>

namespace gpuclean {

class Stopwatch {
 public:
  Stopwatch() : start_(std::chrono::steady_clock::now()) {}
  double ms() const {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

}  // namespace gpuclean
