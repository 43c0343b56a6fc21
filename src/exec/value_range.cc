#include <cfloat>
#include <cmath>

#include "gpuclean/exec.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace gpuclean::exec {
namespace {

// Below this many values one core reads the tensor faster than a team
// starts.
constexpr int64_t kParallelFrom = int64_t{1} << 18;

}  // namespace

FloatRange RangeOf(const Tensor& value) {
  FloatRange range;
  if (value.dtype != tfl::TensorType_FLOAT32) return range;
  const float* __restrict v = value.as<float>();
  const int64_t n = value.num_elements();
  float largest = 0;  // of every |v|, inf included; NaN never wins
  int64_t non_finite = 0;
#ifdef _OPENMP
#pragma omp parallel for simd reduction(max : largest) reduction(+ : non_finite) if (n >= kParallelFrom)
#endif
  for (int64_t i = 0; i < n; ++i) {
    const float a = std::fabs(v[i]);
    largest = a > largest ? a : largest;
    non_finite += !(a <= FLT_MAX);
  }
  range.non_finite = non_finite;
  if (non_finite == 0) {
    range.largest_finite = largest;
    return range;
  }
  // Some are inf or NaN: the largest finite one takes a second pass.
  float finite = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float a = std::fabs(v[i]);
    if (a <= FLT_MAX && a > finite) finite = a;
  }
  range.largest_finite = finite;
  return range;
}

}  // namespace gpuclean::exec
