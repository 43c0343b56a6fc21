// ctest-labels: unit
// exec::RangeOf, the largest finite magnitude and the inf/NaN count convert
// reads off every tensor of its fp16 check's runs: small tensors on one
// core, large ones on every core, the same answer either way.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "gpuclean/exec.h"

namespace gpuclean::exec {
namespace {

FloatRange Of(std::vector<float>& values, ir::DType dtype = tfl::TensorType_FLOAT32) {
  Tensor t;
  t.dtype = dtype;
  t.shape = {static_cast<int32_t>(values.size())};
  t.data = reinterpret_cast<uint8_t*>(values.data());
  t.bytes = values.size() * sizeof(float);
  return RangeOf(t);
}

TEST(RangeOf, LargestFiniteMagnitudeAndNonFiniteCount) {
  std::vector<float> v = {1.0f, -70000.0f, 3.0f};
  FloatRange r = Of(v);
  EXPECT_EQ(r.largest_finite, 70000.0f);
  EXPECT_EQ(r.non_finite, 0);

  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  v = {nan, 2.0f, -inf, -5.0f, inf};
  r = Of(v);
  EXPECT_EQ(r.largest_finite, 5.0f);  // inf and NaN are counted, never the largest
  EXPECT_EQ(r.non_finite, 3);
}

TEST(RangeOf, LargeTensorsAgreeWithASerialScan) {
  std::vector<float> v(3'000'001);
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(static_cast<float>(i)) * 100.0f;
  v[1'234'567] = -65505.0f;
  v[2'999'999] = std::numeric_limits<float>::infinity();
  v[17] = std::numeric_limits<float>::quiet_NaN();
  const FloatRange r = Of(v);
  EXPECT_EQ(r.largest_finite, 65505.0f);
  EXPECT_EQ(r.non_finite, 2);
}

TEST(RangeOf, OtherDtypesAreEmpty) {
  std::vector<float> v = {1e30f};
  const FloatRange r = Of(v, tfl::TensorType_INT32);
  EXPECT_EQ(r.largest_finite, 0.0f);
  EXPECT_EQ(r.non_finite, 0);
}

}  // namespace
}  // namespace gpuclean::exec
