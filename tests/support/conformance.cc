#include "support/conformance.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <memory>

#include "gpuclean/format.h"
#include "gpuclean/shapes.h"
#include "support/arrays.h"
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
    ExpectAgrees(theirs[i], ours[i], rel_tol);
  }
}

void ExpectAgrees(const npy::Array& ref, const npy::Array& got, double rel_tol) {
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

void ExpectFloatsNear(const std::vector<float>& got, const std::vector<float>& want, float tolerance) {
  ASSERT_EQ(got.size(), want.size());
  std::string first;
  size_t differ = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const float g = got[i], w = want[i];
    if (g == w || (std::isnan(g) && std::isnan(w))) continue;
    if (std::fabs(g - w) <= tolerance * std::max(1.0f, std::fabs(w))) continue;
    if (++differ <= 4) first += fmt::format(" [{}] got {} want {};", i, g, w);
  }
  EXPECT_EQ(differ, 0u) << differ << " of " << got.size() << " elements differ beyond " << tolerance << ":" << first;
}

void ExpectArrayNear(const npy::Array& got, const npy::Array& want, float tolerance) {
  ASSERT_EQ(ir::DTypeName(got.dtype), ir::DTypeName(want.dtype));
  ASSERT_EQ(got.shape, want.shape);
  if (got.dtype == tfl::TensorType_FLOAT32) ExpectFloatsNear(ValuesOf<float>(got), ValuesOf<float>(want), tolerance);
  if (got.dtype != tfl::TensorType_FLOAT32 || tolerance == 0) EXPECT_TRUE(got.data == want.data) << "bytes differ";
}

void ExpectThreadsAgree(const ir::Model& model, const std::vector<npy::Array>& inputs, int threads) {
  const std::vector<npy::Array> one = RunOurs(model, inputs, {.threads = 1});
  const std::vector<npy::Array> many = RunOurs(model, inputs, {.threads = threads});
  ASSERT_EQ(one.size(), many.size());
  for (size_t i = 0; i < one.size(); ++i) {
    EXPECT_EQ(one[i].shape, many[i].shape) << "output " << i;
    EXPECT_TRUE(one[i].data == many[i].data) << "output " << i << " differs with " << threads << " threads";
  }
}

void ExpectInterpreterRefuses(const ir::Model& model, ErrorKind kind) {
  try {
    exec::Interpreter interpreter(std::make_shared<const ir::Model>(model));
    ADD_FAILURE() << "the interpreter accepted the model";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
  }
}

std::vector<npy::Array> RunGraphOp(const std::vector<npy::Array>& inputs, const GraphBody& body) {
  builder::GraphBuilder b;
  std::vector<int> ids;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::vector<int32_t> shape(inputs[i].shape.begin(), inputs[i].shape.end());
    ids.push_back(b.Input("in" + std::to_string(i), inputs[i].dtype, shape));
  }
  body(b, ids);
  return RunOurs(b.Finish(), inputs);
}

}  // namespace gpuclean::testing
