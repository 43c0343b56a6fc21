#include "support/conformance.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "gpuclean/format.h"
#include "gpuclean/shapes.h"
#include "support/test_support.h"

namespace gpuclean::testing {

std::vector<npy::Array> RunOurs(const ir::Model& model, const std::vector<npy::Array>& inputs,
                                exec::InterpreterOptions options) {
  exec::Interpreter interpreter(std::make_shared<const ir::Model>(model), options);
  for (size_t i = 0; i < inputs.size(); ++i) interpreter.SetInput(static_cast<int>(i), inputs[i]);
  interpreter.Invoke();
  std::vector<npy::Array> outputs;
  for (int i = 0; i < interpreter.num_outputs(); ++i) outputs.push_back(interpreter.Output(i));
  return outputs;
}

static double ValueAt(const npy::Array& a, int64_t i) {
  switch (a.dtype) {
    case tfl::TensorType_FLOAT32: return a.as<float>()[i];
    case tfl::TensorType_INT32: return a.as<int32_t>()[i];
    case tfl::TensorType_INT64: return static_cast<double>(a.as<int64_t>()[i]);
    case tfl::TensorType_UINT8: return a.as<uint8_t>()[i];
    case tfl::TensorType_INT8: return a.as<int8_t>()[i];
    case tfl::TensorType_BOOL: return a.as<uint8_t>()[i] ? 1 : 0;
    default: return std::nan("");
  }
}

Agreement Compare(const npy::Array& ref, const npy::Array& got) {
  Agreement r;
  const int64_t n = std::min(ref.num_elements(), got.num_elements());
  double sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0;
  int64_t m = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double x = ValueAt(ref, i), y = ValueAt(got, i);
    if (std::isnan(x) && std::isnan(y)) continue;
    if (std::isinf(x) && x == y) continue;
    r.max_abs_ref = std::max(r.max_abs_ref, std::fabs(x));
    const double d = std::fabs(x - y);
    r.max_abs_diff = std::max(r.max_abs_diff, std::isnan(d) ? INFINITY : d);
    sx += x, sy += y, sxx += x * x, syy += y * y, sxy += x * y, ++m;
  }
  if (m > 1) {
    const double cov = sxy - sx * sy / m, vx = sxx - sx * sx / m, vy = syy - sy * sy / m;
    if (vx > 0 && vy > 0)
      r.correlation = cov / std::sqrt(vx * vy);
    else
      r.correlation = (vx == 0 && vy == 0) ? 1.0 : 0.0;
  }
  return r;
}

void ExpectMatchesLiteRt(const ir::Model& model, const std::vector<npy::Array>& inputs, double rel_tol) {
  TempDir dir;
  const std::string path = dir.file("model.tflite");
  format::WriteModel(model, path);
  std::vector<npy::Array> theirs;
  try {
    theirs = RunLiteRt(path, inputs);
  } catch (const std::exception& e) {
    ADD_FAILURE() << e.what();
    return;
  }
  std::vector<npy::Array> ours = RunOurs(model, inputs);
  ASSERT_EQ(ours.size(), theirs.size());
  for (size_t i = 0; i < ours.size(); ++i) {
    SCOPED_TRACE("output " + std::to_string(i));
    const npy::Array& ref = theirs[i];
    const npy::Array& got = ours[i];
    // LiteRT.js returns bools as uint8 and int64 is not readable from JS.
    if (!(ref.dtype == tfl::TensorType_UINT8 && got.dtype == tfl::TensorType_BOOL))
      EXPECT_EQ(ir::DTypeName(ref.dtype), ir::DTypeName(got.dtype));
    ASSERT_EQ(ref.shape, got.shape);
    const Agreement a = Compare(ref, got);
    if (ref.dtype == tfl::TensorType_FLOAT32) {
      EXPECT_LE(a.max_abs_diff, rel_tol * std::max(1.0, a.max_abs_ref))
          << "max |ref| " << a.max_abs_ref << ", correlation " << a.correlation;
    } else {
      EXPECT_EQ(a.max_abs_diff, 0) << "integer/bool outputs differ";
    }
  }
}

}  // namespace gpuclean::testing
