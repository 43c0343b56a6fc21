#pragma once
// Agreement between a reference tensor and another run of it: the numbers
// `compare`, `bisect` and `check` report.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "gpuclean/npy.h"

namespace gpuclean::analyze {

struct Metrics {
  int64_t count = 0;           // elements compared
  bool shape_match = true;     // dtypes may differ; values are compared as numbers
  bool bit_identical = false;  // same dtype, shape and bytes
  // Over the elements finite in both (NaN when none are):
  double correlation = 1;  // Pearson; 1 when both are the same constant, NaN when one side is constant
  double cosine = 1;       // 1 when both are all zeros
  double max_abs_diff = 0;
  double mean_abs_diff = 0;
  double relative_error = 0;  // ||ref - got|| / ||ref|| (L2); 0 when both are zero
  double snr_db = 0;          // 10 log10(sum ref^2 / sum (ref - got)^2); +inf when equal
  double max_abs_ref = 0;
  double max_abs_got = 0;
  int64_t nonfinite_ref = 0;  // inf or NaN elements
  int64_t nonfinite_got = 0;
};

// Compares numeric arrays of the same element count (any dtype; bool and
// integers as numbers). A shape mismatch is recorded (shape_match false) and
// compared element by element when the counts agree; Error(kBadInput) when
// they do not.
Metrics Compare(const npy::Array& ref, const npy::Array& got);

nlohmann::json ToJson(const Metrics& m);

// The values of a numeric array as doubles (bool and integers as numbers,
// float16 decoded); Error(kBadInput) for other dtypes. Gates read tensors
// through it.
std::vector<double> ToDoubles(const npy::Array& array);

// Calls fn(a_at, b_at), where x_at(i) is element i as a double: read in
// place for float32 (the proof's outputs, up to 64M elements each, would
// otherwise be copied twice over as doubles), through ToDoubles otherwise.
template <typename Fn>
decltype(auto) WithDoubles(const npy::Array& a, const npy::Array& b, Fn&& fn) {
  if (a.dtype == tfl::TensorType_FLOAT32 && b.dtype == tfl::TensorType_FLOAT32) {
    const float* pa = a.as<float>();
    const float* pb = b.as<float>();
    return fn([pa](int64_t i) { return static_cast<double>(pa[i]); },
              [pb](int64_t i) { return static_cast<double>(pb[i]); });
  }
  const std::vector<double> va = ToDoubles(a), vb = ToDoubles(b);
  return fn([&va](int64_t i) { return va[static_cast<size_t>(i)]; },
            [&vb](int64_t i) { return vb[static_cast<size_t>(i)]; });
}

}  // namespace gpuclean::analyze
