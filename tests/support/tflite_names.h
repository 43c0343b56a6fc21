#pragma once
// Short names for the TFLite enums tests spell most often. Declared once so
// the test files of one executable can be compiled together (unity builds):
// a file says `using ::gpuclean::testing::tflite_names::F32;` where it used to define its own.
#include "gpuclean/ir.h"

namespace gpuclean::testing::tflite_names {

inline constexpr auto F32 = tfl::TensorType_FLOAT32;
inline constexpr auto kF32 = tfl::TensorType_FLOAT32;
inline constexpr auto I32 = tfl::TensorType_INT32;
inline constexpr auto kI32 = tfl::TensorType_INT32;
inline constexpr auto kRelu = tfl::ActivationFunctionType_RELU;
inline constexpr auto kRelu6 = tfl::ActivationFunctionType_RELU6;
inline constexpr auto kSame = tfl::Padding_SAME;
inline constexpr auto kValid = tfl::Padding_VALID;

}  // namespace gpuclean::testing::tflite_names

namespace gpuclean::testing::targets {

// The measured WebGPU target that tests of WebGPU-specific rules lint against.
inline constexpr const char* kWebGpu = "mldrift-webgpu@2.5.3";
// The target the field-report rules (and the passes that answer them) were
// written for; the default target reads its rules from the delegate's source.
inline constexpr const char* kFieldReports = "mldrift-cl@2.1.6";

}  // namespace gpuclean::testing::targets
