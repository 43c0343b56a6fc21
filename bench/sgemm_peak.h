#pragma once
namespace gpuclean::bench {
// Single-thread sgemm GFLOP/s at 1024^3, the better of OpenBLAS and (where
// the build has it) oneDNN, measured in a child process that tells OpenBLAS
// which core it runs on (Debian's build falls back to SSE3 kernels on CPUs
// it does not recognise).
double MeasureSgemmPeakGflops();
// Entry point of that child process: prints the GFLOP/s.
int SgemmPeakChild();
}  // namespace gpuclean::bench
