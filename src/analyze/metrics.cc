#include "gpuclean/metrics.h"
#include "gpuclean/half.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "gpuclean/error.h"

namespace gpuclean::analyze {
namespace {

template <typename T>
void AppendAs(const npy::Array& a, std::vector<double>& out) {
  const int64_t n = a.num_elements();
  out.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, a.data.data() + i * sizeof(T), sizeof(T));
    out[i] = static_cast<double>(v);
  }
}

std::vector<double> AsDoubles(const npy::Array& a) {
  std::vector<double> v;
  switch (a.dtype) {
    case tfl::TensorType_FLOAT32: AppendAs<float>(a, v); break;
    case tfl::TensorType_FLOAT64: AppendAs<double>(a, v); break;
    case tfl::TensorType_INT32: AppendAs<int32_t>(a, v); break;
    case tfl::TensorType_INT64: AppendAs<int64_t>(a, v); break;
    case tfl::TensorType_INT16: AppendAs<int16_t>(a, v); break;
    case tfl::TensorType_INT8: AppendAs<int8_t>(a, v); break;
    case tfl::TensorType_UINT8: AppendAs<uint8_t>(a, v); break;
    case tfl::TensorType_BOOL: AppendAs<uint8_t>(a, v); break;
    case tfl::TensorType_UINT32: AppendAs<uint32_t>(a, v); break;
    case tfl::TensorType_UINT16: AppendAs<uint16_t>(a, v); break;
    case tfl::TensorType_FLOAT16: {
      const int64_t n = a.num_elements();
      v.resize(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, a.data.data() + 2 * i, 2);
        v[i] = HalfToFloat(h);
      }
      break;
    }
    default:
      throw Error(ErrorKind::kBadInput, fmt::format("cannot compare tensors of dtype {}", ir::DTypeName(a.dtype)));
  }
  return v;
}

// The metrics' sums over element accessors (a(i), b(i) doubles).
template <typename RefAt, typename GotAt>
void Accumulate(Metrics& m, const RefAt& a, const GotAt& b) {
  double sa = 0, sb = 0;
  int64_t n = 0;
  for (int64_t i = 0; i < m.count; ++i) {
    const bool fa = std::isfinite(a(i)), fb = std::isfinite(b(i));
    m.nonfinite_ref += !fa;
    m.nonfinite_got += !fb;
    if (!fa || !fb) continue;
    sa += a(i);
    sb += b(i);
    ++n;
  }
  if (n == 0) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    if (m.count > 0) m.correlation = m.cosine = m.max_abs_diff = m.mean_abs_diff = m.relative_error = m.snr_db = nan;
    return;
  }
  const double ma = sa / n, mb = sb / n;
  double cov = 0, va = 0, vb = 0, dot = 0, na = 0, nb = 0, err2 = 0, abs_sum = 0;
  for (int64_t i = 0; i < m.count; ++i) {
    if (!std::isfinite(a(i)) || !std::isfinite(b(i))) continue;
    const double da = a(i) - ma, db = b(i) - mb, d = a(i) - b(i);
    cov += da * db;
    va += da * da;
    vb += db * db;
    dot += a(i) * b(i);
    na += a(i) * a(i);
    nb += b(i) * b(i);
    err2 += d * d;
    abs_sum += std::fabs(d);
    m.max_abs_diff = std::max(m.max_abs_diff, std::fabs(d));
    m.max_abs_ref = std::max(m.max_abs_ref, std::fabs(a(i)));
    m.max_abs_got = std::max(m.max_abs_got, std::fabs(b(i)));
  }
  m.mean_abs_diff = abs_sum / n;
  if (va > 0 && vb > 0)
    m.correlation = cov / std::sqrt(va * vb);
  else if (va == 0 && vb == 0 && ma == mb)
    m.correlation = 1.0;
  else  // a constant on one side (or a single element): correlation says nothing
    m.correlation = std::numeric_limits<double>::quiet_NaN();
  if (na > 0 && nb > 0)
    m.cosine = dot / std::sqrt(na * nb);
  else
    m.cosine = (na == 0 && nb == 0) ? 1.0 : 0.0;
  m.relative_error = na > 0 ? std::sqrt(err2 / na) : (err2 > 0 ? INFINITY : 0.0);
  m.snr_db = err2 > 0 ? 10 * std::log10(na / err2) : INFINITY;
}

}  // namespace

Metrics Compare(const npy::Array& ref, const npy::Array& got) {
  Metrics m;
  m.shape_match = ref.shape == got.shape;
  if (ref.num_elements() != got.num_elements())
    throw Error(ErrorKind::kBadInput, fmt::format("shapes [{}] and [{}] have different element counts",
                                                  fmt::join(ref.shape, ","), fmt::join(got.shape, ",")));
  m.bit_identical = m.shape_match && ref.dtype == got.dtype && ref.data == got.data;
  m.count = ref.num_elements();
  WithDoubles(ref, got, [&m](auto a, auto b) { Accumulate(m, a, b); });
  return m;
}

std::vector<double> ToDoubles(const npy::Array& array) { return AsDoubles(array); }

nlohmann::json ToJson(const Metrics& m) {
  // JSON has no inf/NaN: they become null.
  auto num = [](double x) -> nlohmann::json { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(); };
  return {{"count", m.count},
          {"shape_match", m.shape_match},
          {"bit_identical", m.bit_identical},
          {"correlation", num(m.correlation)},
          {"cosine", num(m.cosine)},
          {"max_abs_diff", num(m.max_abs_diff)},
          {"mean_abs_diff", num(m.mean_abs_diff)},
          {"relative_error", num(m.relative_error)},
          {"snr_db", std::isinf(m.snr_db) && m.snr_db > 0 ? nlohmann::json("inf") : num(m.snr_db)},
          {"max_abs_ref", num(m.max_abs_ref)},
          {"max_abs_got", num(m.max_abs_got)},
          {"nonfinite_ref", m.nonfinite_ref},
          {"nonfinite_got", m.nonfinite_got}};
}

}  // namespace gpuclean::analyze
