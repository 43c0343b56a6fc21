#pragma once
// The interpreter's numeric modes, named once for every module that names
// one: the interpreter runs them, the matrix says which one models a target.
#include <string>
#include <string_view>
#include <vector>

namespace gpuclean {

// Numeric modes (docs/numerics.md). Each GPU target's matrix names the one
// that models it (lint::NumericModel).
//  - kFp16Storage: every float tensor (op outputs, weights, inputs) rounded
//    to binary16; float arithmetic inside ops.
//  - kFp16Compute: as kFp16Storage, plus every accumulation in binary16
//    (mobile OpenCL GPUs with half accumulators).
//  - kFp16Fused: float arithmetic; binary16 only where a tensor is written
//    between kernels (exec::KeptInFloat), for graph inputs and for constants
//    of more than one element. The ML Drift WebGPU backend as measured on
//    LiteRT.js 2.5.3.
// kFp16F32Accum: ML Drift's use_f32_accum_for_fp16 (docs/numerics.md).
enum class Precision { kFp32, kFp16Storage, kFp16Compute, kFp16Fused, kFp16F32Accum };
std::string_view PrecisionName(Precision p);
Precision ParsePrecision(const std::string& name);  // throws Error(kUsage)
// Every mode name, in the order above ("fp32", "fp16-storage", ...).
const std::vector<std::string>& PrecisionNames();

}  // namespace gpuclean
