// Elementwise host steps: the binary ops with numpy broadcasting, the
// activations, affine rescaling and thresholds. Float arithmetic is float32
// throughout, as the graph ops compute it.
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "gpuclean/host_steps.h"
#include "pipeline/steps/step_util.h"

namespace gpuclean::pipeline {
using steps::Fail;

namespace {

const char* BinaryName(BinaryFn fn) {
  switch (fn) {
    case BinaryFn::kAdd: return "add";
    case BinaryFn::kSub: return "sub";
    case BinaryFn::kMul: return "mul";
    case BinaryFn::kDiv: return "div";
    case BinaryFn::kMaximum: return "maximum";
    case BinaryFn::kMinimum: return "minimum";
    case BinaryFn::kPow: return "pow";
  }
  return "binary";
}

template <typename T>
T Apply(BinaryFn fn, T a, T b) {
  switch (fn) {
    case BinaryFn::kAdd: return a + b;
    case BinaryFn::kSub: return a - b;
    case BinaryFn::kMul: return a * b;
    case BinaryFn::kDiv: return a / b;
    case BinaryFn::kMaximum: return a > b ? a : b;
    case BinaryFn::kMinimum: return a < b ? a : b;
    case BinaryFn::kPow: return static_cast<T>(std::pow(a, b));
  }
  return a;
}

// Integer add/sub/mul wrap as two's complement, as LiteRT's int32 kernels
// do on the hardware (computed unsigned: signed overflow is undefined).
int32_t ApplyInt(BinaryFn fn, int32_t a, int32_t b) {
  const uint32_t ua = static_cast<uint32_t>(a), ub = static_cast<uint32_t>(b);
  switch (fn) {
    case BinaryFn::kAdd: return static_cast<int32_t>(ua + ub);
    case BinaryFn::kSub: return static_cast<int32_t>(ua - ub);
    case BinaryFn::kMul: return static_cast<int32_t>(ua * ub);
    default: return Apply(fn, a, b);
  }
}

template <typename T, typename F>
npy::Array Broadcast(const char* step, const npy::Array& a, const npy::Array& b, F f) {
  const std::vector<int64_t> shape = steps::BroadcastShape(step, a.shape, b.shape);
  npy::Array out = steps::MakeArray(a.dtype, shape);
  const std::vector<int64_t> ia = steps::BroadcastIndex(a.shape, shape), ib = steps::BroadcastIndex(b.shape, shape);
  const T* pa = a.as<T>();
  const T* pb = b.as<T>();
  T* po = out.as<T>();
  for (size_t i = 0; i < ia.size(); ++i) po[i] = f(pa[ia[i]], pb[ib[i]]);
  return out;
}

}  // namespace

npy::Array Binary(BinaryFn fn, const npy::Array& a, const npy::Array& b) {
  const char* step = BinaryName(fn);
  steps::RequireWellFormed(step, a, "input a");
  steps::RequireWellFormed(step, b, "input b");
  if (a.dtype != b.dtype)
    Fail(step, "inputs are {} and {}; both must have one dtype", ir::DTypeName(a.dtype), ir::DTypeName(b.dtype));
  if (a.dtype == tfl::TensorType_FLOAT32)
    return Broadcast<float>(step, a, b, [fn](float x, float y) { return Apply(fn, x, y); });
  if (a.dtype == tfl::TensorType_INT32 && fn != BinaryFn::kDiv && fn != BinaryFn::kPow)
    return Broadcast<int32_t>(step, a, b, [fn](int32_t x, int32_t y) { return ApplyInt(fn, x, y); });
  Fail(step, "inputs are {}; expected float32{}", ir::DTypeName(a.dtype),
       fn == BinaryFn::kDiv || fn == BinaryFn::kPow ? "" : " or int32");
}

npy::Array Unary(UnaryFn fn, const npy::Array& x) {
  steps::RequireWellFormed("unary", x, "input");
  steps::RequireFloat("unary", x, "input");
  npy::Array out = steps::MakeArray(x.dtype, x.shape);
  const float* in = x.as<float>();
  float* o = out.as<float>();
  const int64_t n = x.num_elements();
  for (int64_t i = 0; i < n; ++i) {
    const float v = in[i];
    switch (fn) {
      // 1/(1+e^-v) overflows to 0 gracefully for very negative v.
      case UnaryFn::kSigmoid: o[i] = 1.0f / (1.0f + std::exp(-v)); break;
      case UnaryFn::kExp: o[i] = std::exp(v); break;
      case UnaryFn::kLog: o[i] = std::log(v); break;
      case UnaryFn::kRelu: o[i] = v > 0 ? v : 0.0f; break;
      case UnaryFn::kTanh: o[i] = std::tanh(v); break;
      case UnaryFn::kNeg: o[i] = -v; break;
      case UnaryFn::kAbs: o[i] = std::fabs(v); break;
      case UnaryFn::kSqrt: o[i] = std::sqrt(v); break;
    }
  }
  return out;
}

npy::Array Affine(const npy::Array& x, float scale, float offset) {
  steps::RequireWellFormed("affine", x, "input");
  steps::RequireFloat("affine", x, "input");
  npy::Array out = steps::MakeArray(x.dtype, x.shape);
  const float* in = x.as<float>();
  float* o = out.as<float>();
  for (int64_t i = 0, n = x.num_elements(); i < n; ++i) o[i] = in[i] * scale + offset;
  return out;
}

npy::Array Threshold(const npy::Array& x, float threshold) {
  steps::RequireWellFormed("threshold", x, "input");
  steps::RequireFloat("threshold", x, "input");
  npy::Array out = steps::MakeArray(tfl::TensorType_BOOL, x.shape);
  const float* in = x.as<float>();
  uint8_t* o = out.as<uint8_t>();
  for (int64_t i = 0, n = x.num_elements(); i < n; ++i) o[i] = in[i] > threshold ? 1 : 0;
  return out;
}

namespace {

template <typename T>
bool ApplyCompare(CompareFn fn, T a, T b) {
  switch (fn) {
    case CompareFn::kLess: return a < b;
    case CompareFn::kLessEqual: return a <= b;
    case CompareFn::kGreater: return a > b;
    case CompareFn::kGreaterEqual: return a >= b;
    case CompareFn::kEqual: return a == b;
    case CompareFn::kNotEqual: return a != b;
  }
  return false;
}

template <typename T>
npy::Array CompareAs(CompareFn fn, const npy::Array& a, const npy::Array& b) {
  const std::vector<int64_t> shape = steps::BroadcastShape("compare", a.shape, b.shape);
  npy::Array out = steps::MakeArray(tfl::TensorType_BOOL, shape);
  const std::vector<int64_t> ia = steps::BroadcastIndex(a.shape, shape), ib = steps::BroadcastIndex(b.shape, shape);
  const T* pa = a.as<T>();
  const T* pb = b.as<T>();
  uint8_t* po = out.as<uint8_t>();
  for (size_t i = 0; i < ia.size(); ++i) po[i] = ApplyCompare(fn, pa[ia[i]], pb[ib[i]]) ? 1 : 0;
  return out;
}

template <typename To, typename From>
void CastElements(const npy::Array& x, npy::Array& out) {
  const From* in = x.as<From>();
  To* o = out.as<To>();
  for (int64_t i = 0, n = x.num_elements(); i < n; ++i) {
    const From v = in[i];
    if constexpr (std::is_same_v<To, bool> || std::is_same_v<To, uint8_t>) {
      if (out.dtype == tfl::TensorType_BOOL) {
        reinterpret_cast<uint8_t*>(o)[i] = v != From{} ? 1 : 0;
        continue;
      }
    }
    if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
      // Truncation is defined only where the integer type holds the value.
      const double t = std::trunc(static_cast<double>(v));
      if (!(t >= static_cast<double>(std::numeric_limits<To>::min()) &&
            t <= static_cast<double>(std::numeric_limits<To>::max())))
        Fail("cast", "element {} ({}) does not fit {}", i, static_cast<double>(v), ir::DTypeName(out.dtype));
    }
    o[i] = static_cast<To>(v);
  }
}

template <typename To>
void CastFrom(const npy::Array& x, npy::Array& out) {
  switch (x.dtype) {
    case tfl::TensorType_FLOAT32: return CastElements<To, float>(x, out);
    case tfl::TensorType_INT32: return CastElements<To, int32_t>(x, out);
    case tfl::TensorType_INT64: return CastElements<To, int64_t>(x, out);
    case tfl::TensorType_UINT8:
    case tfl::TensorType_BOOL: return CastElements<To, uint8_t>(x, out);
    default: Fail("cast", "input is {}; expected float32, int32, int64, uint8 or bool", ir::DTypeName(x.dtype));
  }
}

}  // namespace

npy::Array Compare(CompareFn fn, const npy::Array& a, const npy::Array& b) {
  steps::RequireWellFormed("compare", a, "input a");
  steps::RequireWellFormed("compare", b, "input b");
  if (a.dtype != b.dtype)
    Fail("compare", "inputs are {} and {}; both must have one dtype", ir::DTypeName(a.dtype), ir::DTypeName(b.dtype));
  if (a.dtype == tfl::TensorType_FLOAT32) return CompareAs<float>(fn, a, b);
  if (a.dtype == tfl::TensorType_INT32) return CompareAs<int32_t>(fn, a, b);
  Fail("compare", "inputs are {}; expected float32 or int32", ir::DTypeName(a.dtype));
}

npy::Array Select(const npy::Array& condition, const npy::Array& a, const npy::Array& b) {
  steps::RequireWellFormed("select", condition, "condition");
  steps::RequireWellFormed("select", a, "input a");
  steps::RequireWellFormed("select", b, "input b");
  steps::RequireDtype("select", condition, "condition", {tfl::TensorType_BOOL});
  if (a.dtype != b.dtype)
    Fail("select", "inputs are {} and {}; both must have one dtype", ir::DTypeName(a.dtype), ir::DTypeName(b.dtype));
  const std::vector<int64_t> shape =
      steps::BroadcastShape("select", steps::BroadcastShape("select", condition.shape, a.shape), b.shape);
  npy::Array out = steps::MakeArray(a.dtype, shape);
  const std::vector<int64_t> ic = steps::BroadcastIndex(condition.shape, shape),
                             ia = steps::BroadcastIndex(a.shape, shape), ib = steps::BroadcastIndex(b.shape, shape);
  const size_t elem = ir::DTypeSize(a.dtype);
  const uint8_t* pc = condition.as<uint8_t>();
  for (size_t i = 0; i < ic.size(); ++i) {
    const uint8_t* from = pc[ic[i]] ? a.data.data() + ia[i] * elem : b.data.data() + ib[i] * elem;
    std::memcpy(out.data.data() + i * elem, from, elem);
  }
  return out;
}

npy::Array Cast(const npy::Array& x, ir::DType to) {
  steps::RequireWellFormed("cast", x, "input");
  npy::Array out = steps::MakeArray(to, x.shape);
  switch (to) {
    case tfl::TensorType_FLOAT32: CastFrom<float>(x, out); break;
    case tfl::TensorType_INT32: CastFrom<int32_t>(x, out); break;
    case tfl::TensorType_INT64: CastFrom<int64_t>(x, out); break;
    case tfl::TensorType_UINT8:
    case tfl::TensorType_BOOL: CastFrom<uint8_t>(x, out); break;
    default: Fail("cast", "cannot cast to {}; float32, int32, int64, uint8 and bool are supported", ir::DTypeName(to));
  }
  return out;
}

}  // namespace gpuclean::pipeline
