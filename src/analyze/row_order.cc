#include <fmt/format.h>

#include <cmath>

#include "gpuclean/error.h"
#include "gpuclean/half.h"
#include "gpuclean/task_gates.h"

namespace gpuclean::analyze {
namespace {

std::vector<double> Values(const npy::Array& a) {
  const int64_t n = a.num_elements();
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    switch (a.dtype) {
      case tfl::TensorType_FLOAT32: v[i] = a.as<float>()[i]; break;
      case tfl::TensorType_FLOAT16: v[i] = HalfToFloat(a.as<uint16_t>()[i]); break;
      case tfl::TensorType_INT32: v[i] = a.as<int32_t>()[i]; break;
      case tfl::TensorType_INT64: v[i] = static_cast<double>(a.as<int64_t>()[i]); break;
      case tfl::TensorType_BOOL:
      case tfl::TensorType_UINT8: v[i] = a.as<uint8_t>()[i]; break;
      default: return {};
    }
  }
  return v;
}

}  // namespace

std::optional<std::string> RowsInAnotherOrder(const std::vector<npy::Array>& reference,
                                              const std::vector<npy::Array>& got, double atol) {
  if (reference.empty() || reference.size() != got.size()) return std::nullopt;
  const auto rows_of = [](const npy::Array& a) { return a.shape.empty() ? int64_t{-1} : a.shape[0]; };
  const int64_t rows = rows_of(reference[0]);
  struct Columns {
    std::vector<double> ref, got;
    int64_t width = 0;
  };
  std::vector<Columns> outputs;
  for (size_t o = 0; o < reference.size(); ++o) {
    if (rows_of(reference[o]) != rows || rows_of(got[o]) != rows || reference[o].shape != got[o].shape)
      return std::nullopt;
    Columns c{Values(reference[o]), Values(got[o]), rows == 0 ? 0 : reference[o].num_elements() / rows};
    if (static_cast<int64_t>(c.ref.size()) != reference[o].num_elements() || c.got.size() != c.ref.size())
      return std::nullopt;
    outputs.push_back(std::move(c));
  }
  const auto same_row = [&](int64_t r, int64_t g) {
    for (const Columns& c : outputs)
      for (int64_t e = 0; e < c.width; ++e) {
        const double a = c.ref[r * c.width + e], b = c.got[g * c.width + e];
        if (!(std::fabs(a - b) <= atol * std::max(1.0, std::fabs(a)))) return false;
      }
    return true;
  };
  // Rows move only a little: search outward from the same position.
  std::vector<bool> taken(static_cast<size_t>(rows), false);
  int64_t moved = 0;
  for (int64_t r = 0; r < rows; ++r) {
    int64_t partner = -1;
    for (int64_t d = 0; d < rows && partner < 0; ++d)
      for (const int64_t g : {r - d, r + d})
        if (g >= 0 && g < rows && !taken[g] && same_row(r, g)) {
          partner = g;
          break;
        }
    if (partner < 0) return std::nullopt;
    taken[partner] = true;
    moved += partner != r;
  }
  return fmt::format("{}/{} rows paired one to one, {} in another order", rows, rows, moved);
}

}  // namespace gpuclean::analyze
