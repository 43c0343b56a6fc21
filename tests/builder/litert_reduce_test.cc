// ctest-labels: litert
// Reduction and normalisation cases: reductions with keep_dims, negative
// and repeated axes; softmax with beta; log-softmax; L2 normalisation.
#include <cmath>

#include "builder/litert_case.h"

namespace gpuclean::testing {
namespace {

// Reference reduction of `x` (shape `in`) over `axes`, in the output's
// row-major order whether or not the reduced dimensions are kept.
std::vector<float> ReferenceReduce(const std::vector<float>& x, const Shape& in, const std::vector<int>& axes,
                                   float init, const std::function<float(float, float)>& combine, bool mean) {
  Shape kept = in;
  for (int a : axes) kept[a] = 1;
  std::vector<float> acc(Elements(kept), init);
  std::vector<int> count(acc.size(), 0);
  ForEachIndex(in, [&](const std::vector<int32_t>& i) {
    std::vector<int32_t> o = i;
    for (int a : axes) o[a] = 0;
    const int64_t at = Offset(kept, o);
    acc[at] = combine(acc[at], x[Offset(in, i)]);
    ++count[at];
  });
  if (mean)
    for (size_t k = 0; k < acc.size(); ++k) acc[k] /= static_cast<float>(count[k]);
  return acc;
}

OpCase ReduceCase(std::string name, tfl::BuiltinOperator code, Shape input, std::vector<int32_t> axes,
                  std::vector<int> normalized_axes, bool keep_dims, Shape expected, float init,
                  std::function<float(float, float)> combine, bool mean = false, float low = -2, float high = 2) {
  OpCase c;
  c.name = std::move(name);
  c.low = low;
  c.high = high;
  c.build = [=] {
    return OneOp({input}, [&](GraphBuilder& b, const std::vector<int>& in) {
      const int out = b.Reduce(code, in[0], axes, keep_dims);
      EXPECT_EQ(b.shape(out), expected);
      return std::vector<int>{out};
    });
  };
  c.check = [=](const Arrays& in, const Arrays& out) {
    ExpectFloatsNear(Floats(out[0]), ReferenceReduce(Floats(in[0]), input, normalized_axes, init, combine, mean),
                     1e-5f);
  };
  return c;
}

std::vector<float> RowSoftmax(const std::vector<float>& x, int rows, int cols, float beta, bool log) {
  std::vector<float> out(x.size());
  for (int r = 0; r < rows; ++r) {
    double max = -1e30, sum = 0;
    for (int c = 0; c < cols; ++c) max = std::max<double>(max, x[r * cols + c]);
    for (int c = 0; c < cols; ++c) sum += std::exp(beta * (x[r * cols + c] - max));
    for (int c = 0; c < cols; ++c) {
      const double z = beta * (x[r * cols + c] - max);
      out[r * cols + c] = static_cast<float>(log ? z - std::log(sum) : std::exp(z) / sum);
    }
  }
  return out;
}

}  // namespace

std::vector<OpCase> ReduceCases() {
  auto add = [](float a, float b) { return a + b; };
  auto mul = [](float a, float b) { return a * b; };
  auto max = [](float a, float b) { return std::max(a, b); };
  auto min = [](float a, float b) { return std::min(a, b); };
  std::vector<OpCase> cases;
  cases.push_back(ReduceCase("MEAN_spatial_keep_dims", tfl::BuiltinOperator_MEAN, {2, 3, 4, 5}, {1, 2}, {1, 2}, true,
                             {2, 1, 1, 5}, 0.0f, add, true));
  cases.push_back(
      ReduceCase("SUM_negative_axis", tfl::BuiltinOperator_SUM, {2, 3, 4}, {-1}, {2}, false, {2, 3}, 0.0f, add));
  cases.push_back(ReduceCase("REDUCE_MAX_repeated_axes", tfl::BuiltinOperator_REDUCE_MAX, {2, 3, 4}, {0, 2, -1}, {0, 2},
                             false, {3}, -1e30f, max));
  cases.push_back(ReduceCase("REDUCE_MIN_keep_dims", tfl::BuiltinOperator_REDUCE_MIN, {2, 3, 4}, {1}, {1}, true,
                             {2, 1, 4}, 1e30f, min));
  cases.push_back(ReduceCase("REDUCE_PROD", tfl::BuiltinOperator_REDUCE_PROD, {2, 3, 4}, {1}, {1}, false, {2, 4}, 1.0f,
                             mul, false, 0.5f, 1.5f));

  OpCase softmax;
  softmax.name = "SOFTMAX_beta_0_5";
  softmax.build = [] {
    return OneOp({{2, 5}},
                 [](GraphBuilder& b, const std::vector<int>& in) { return std::vector<int>{b.Softmax(in[0], 0.5f)}; });
  };
  softmax.check = [](const Arrays& in, const Arrays& out) {
    ExpectFloatsNear(Floats(out[0]), RowSoftmax(Floats(in[0]), 2, 5, 0.5f, false), 1e-5f);
  };
  cases.push_back(softmax);

  OpCase log_softmax;
  log_softmax.name = "LOG_SOFTMAX";
  log_softmax.build = [] {
    return OneOp({{2, 5}},
                 [](GraphBuilder& b, const std::vector<int>& in) { return std::vector<int>{b.LogSoftmax(in[0])}; });
  };
  log_softmax.check = [](const Arrays& in, const Arrays& out) {
    ExpectFloatsNear(Floats(out[0]), RowSoftmax(Floats(in[0]), 2, 5, 1.0f, true), 1e-5f);
  };
  cases.push_back(log_softmax);

  OpCase l2;
  l2.name = "L2_NORMALIZATION_last_axis";
  l2.build = [] {
    return OneOp({{2, 3, 4}}, [](GraphBuilder& b, const std::vector<int>& in) {
      return std::vector<int>{b.L2Normalization(in[0])};
    });
  };
  l2.check = [](const Arrays& in, const Arrays& out) {
    const std::vector<float> x = Floats(in[0]);
    std::vector<float> want(x.size());
    for (int r = 0; r < 6; ++r) {
      double sum = 0;
      for (int c = 0; c < 4; ++c) sum += static_cast<double>(x[r * 4 + c]) * x[r * 4 + c];
      for (int c = 0; c < 4; ++c) want[r * 4 + c] = static_cast<float>(x[r * 4 + c] / std::sqrt(sum));
    }
    ExpectFloatsNear(Floats(out[0]), want, 1e-5f);
  };
  cases.push_back(l2);
  return cases;
}

}  // namespace gpuclean::testing
