#include "gpuclean/precision.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gpuclean/error.h"

namespace gpuclean {

std::string_view PrecisionName(Precision p) {
  switch (p) {
    case Precision::kFp32: return "fp32";
    case Precision::kFp16Storage: return "fp16-storage";
    case Precision::kFp16Compute: return "fp16-compute";
    case Precision::kFp16Fused: return "fp16-fused";
    case Precision::kFp16F32Accum: return "fp16-f32acc";
  }
  return "fp32";
}

const std::vector<std::string>& PrecisionNames() {
  static const std::vector<std::string> kNames = {"fp32", "fp16-storage", "fp16-compute", "fp16-fused", "fp16-f32acc"};
  return kNames;
}

Precision ParsePrecision(const std::string& name) {
  for (Precision p : {Precision::kFp32, Precision::kFp16Storage, Precision::kFp16Compute, Precision::kFp16Fused,
                      Precision::kFp16F32Accum})
    if (PrecisionName(p) == name) return p;
  throw Error(ErrorKind::kUsage,
              fmt::format("unknown precision '{}' (expected {})", name, fmt::join(PrecisionNames(), ", ")));
}

}  // namespace gpuclean
