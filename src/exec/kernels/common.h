#pragma once
// Small helpers every kernel family uses.
#include <fp16.h>

#include <algorithm>
#include <cmath>

#include "exec/kernel.h"

namespace gpuclean::exec::kernels {

inline float ApplyActivation(float x, tfl::ActivationFunctionType act) {
  switch (act) {
    case tfl::ActivationFunctionType_NONE: return x;
    case tfl::ActivationFunctionType_RELU: return std::max(x, 0.0f);
    case tfl::ActivationFunctionType_RELU_N1_TO_1: return std::clamp(x, -1.0f, 1.0f);
    case tfl::ActivationFunctionType_RELU6: return std::clamp(x, 0.0f, 6.0f);
    case tfl::ActivationFunctionType_TANH: return std::tanh(x);
    case tfl::ActivationFunctionType_SIGN_BIT: return std::signbit(x) ? 1.0f : 0.0f;
  }
  return x;
}

inline bool IsSupportedActivation(tfl::ActivationFunctionType act) {
  return act != tfl::ActivationFunctionType_SIGN_BIT;
}

inline float HalfToFloat(uint16_t h) { return fp16_ieee_to_fp32_value(h); }
inline uint16_t FloatToHalf(float f) { return fp16_ieee_from_fp32_value(f); }

}  // namespace gpuclean::exec::kernels
