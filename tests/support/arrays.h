#pragma once
// Arrays with given values, for hand-computed test cases.
#include <cstdint>
#include <vector>

#include "gpuclean/npy.h"

namespace gpuclean::testing {

npy::Array F32(std::vector<int64_t> shape, const std::vector<float>& values);
npy::Array I32(std::vector<int64_t> shape, const std::vector<int32_t>& values);

}  // namespace gpuclean::testing
