#pragma once
namespace gpuclean::bench {
// Single-thread sgemm GFLOP/s of OpenBLAS at 1024^3, measured in a child
// process that tells OpenBLAS which core it runs on (Debian's build falls
// back to SSE3 kernels on CPUs it does not recognise).
double MeasureSgemmPeakGflops();
// Entry point of that child process: prints the GFLOP/s.
int SgemmPeakChild();
}  // namespace gpuclean::bench
