#pragma once
// IEEE binary16 <-> binary32, rounded to nearest even, by the FP16 library
// (libfp16-dev): the one conversion every module uses.
#include <fp16.h>

#include <cstdint>

namespace gpuclean {

// The largest finite binary16 value: past it a half is inf.
constexpr double kHalfMax = 65504;

inline float HalfToFloat(uint16_t h) { return fp16_ieee_to_fp32_value(h); }
inline uint16_t FloatToHalf(float f) { return fp16_ieee_from_fp32_value(f); }

}  // namespace gpuclean
