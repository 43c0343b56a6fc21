// Metrics against hand-computed values.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "gpuclean/error.h"
#include "gpuclean/metrics.h"
#include "support/arrays.h"
#include "support/test_support.h"

namespace gpuclean::analyze {
namespace {

using gpuclean::testing::F32;

TEST(Metrics, HandComputedValues) {
  const Metrics m = Compare(F32({4}, {1, 2, 3, 4}), F32({4}, {1, 2, 3, 5}));
  EXPECT_EQ(m.count, 4);
  EXPECT_FALSE(m.bit_identical);
  EXPECT_DOUBLE_EQ(m.max_abs_diff, 1.0);
  EXPECT_DOUBLE_EQ(m.mean_abs_diff, 0.25);
  // cov 6.5, var 5 and 8.75.
  EXPECT_NEAR(m.correlation, 6.5 / std::sqrt(5 * 8.75), 1e-12);
  EXPECT_NEAR(m.cosine, 34 / std::sqrt(30.0 * 39.0), 1e-12);
  EXPECT_NEAR(m.relative_error, 1 / std::sqrt(30.0), 1e-12);
  EXPECT_NEAR(m.snr_db, 10 * std::log10(30.0), 1e-12);
  EXPECT_DOUBLE_EQ(m.max_abs_ref, 4.0);
  EXPECT_DOUBLE_EQ(m.max_abs_got, 5.0);
}

TEST(Metrics, IdenticalNonFiniteAndConstantCases) {
  const Metrics same = Compare(F32({2, 2}, {1, -2, 3, 4}), F32({2, 2}, {1, -2, 3, 4}));
  EXPECT_TRUE(same.bit_identical);
  EXPECT_DOUBLE_EQ(same.correlation, 1.0);
  EXPECT_TRUE(std::isinf(same.snr_db));

  const Metrics nf = Compare(F32({4}, {1, 2, 3, 4}), F32({4}, {1, INFINITY, NAN, 4}));
  EXPECT_EQ(nf.nonfinite_ref, 0);
  EXPECT_EQ(nf.nonfinite_got, 2);
  EXPECT_EQ(nf.max_abs_diff, 0.0);  // over the elements finite on both sides

  EXPECT_DOUBLE_EQ(Compare(F32({3}, {2, 2, 2}), F32({3}, {2, 2, 2})).correlation, 1.0);
  EXPECT_TRUE(std::isnan(Compare(F32({3}, {2, 2, 2}), F32({3}, {1, 2, 3})).correlation));

  const Metrics reshaped = Compare(F32({4}, {1, 2, 3, 4}), F32({2, 2}, {1, 2, 3, 4}));
  EXPECT_FALSE(reshaped.shape_match);
  EXPECT_FALSE(reshaped.bit_identical);
  EXPECT_DOUBLE_EQ(reshaped.correlation, 1.0);
  EXPECT_THROW(Compare(F32({4}, {1, 2, 3, 4}), F32({3}, {1, 2, 3})), Error);
}

}  // namespace
}  // namespace gpuclean::analyze
