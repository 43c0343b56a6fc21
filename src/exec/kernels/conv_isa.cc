// The conv family's SIMD dispatch: what the CPU supports, and what the
// kernels use (GPUCLEAN_ISA=generic|avx2|avx512 lowers it). See conv_util.h.

#include "exec/kernels/conv_util.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "gpuclean/error.h"
#include "gpuclean/shapes.h"

namespace gpuclean::exec::kernels::conv {

// ------------------------------------------------------------------ SIMD

namespace {

Isa Detect() {
#if GPUCLEAN_CONV_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return Isa::kAvx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Isa::kAvx2;
#endif
  return Isa::kGeneric;
}

std::atomic<int> g_active_isa{-1};

}  // namespace

Isa DetectedIsa() {
  static const Isa detected = Detect();
  return detected;
}

Isa ActiveIsa() {
  int v = g_active_isa.load(std::memory_order_relaxed);
  if (v >= 0) return static_cast<Isa>(v);
  Isa isa = DetectedIsa();
  // GPUCLEAN_ISA=generic|avx2|avx512 lowers the choice (benchmarks, debugging).
  if (const char* env = std::getenv("GPUCLEAN_ISA")) {
    const std::string s(env);
    Isa want = isa;
    if (s == "generic") want = Isa::kGeneric;
    if (s == "avx2") want = Isa::kAvx2;
    if (s == "avx512") want = Isa::kAvx512;
    isa = std::min(isa, want);
  }
  g_active_isa.store(static_cast<int>(isa), std::memory_order_relaxed);
  return isa;
}

Isa SetIsaForTesting(Isa isa) {
  isa = std::min(isa, DetectedIsa());
  g_active_isa.store(static_cast<int>(isa), std::memory_order_relaxed);
  return isa;
}

const char* IsaName(Isa isa) {
  switch (isa) {
    case Isa::kAvx512: return "avx512";
    case Isa::kAvx2: return "avx2";
    case Isa::kGeneric: return "generic";
  }
  return "?";
}

}  // namespace gpuclean::exec::kernels::conv
