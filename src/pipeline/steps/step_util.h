#pragma once
// What every host step shares: making arrays, naming the step in errors,
// numpy broadcasting and axis normalisation.
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "gpuclean/error.h"
#include "gpuclean/npy.h"

namespace gpuclean::pipeline::steps {

template <typename... Args>
[[noreturn]] void Fail(std::string_view step, fmt::format_string<Args...> format, Args&&... args) {
  ThrowBadInput(fmt::format("host step {}: {}", step, fmt::format(format, std::forward<Args>(args)...)));
}

// A zero-filled array; Error(kBadInput) for a negative dimension or more
// elements than an int64 holds.
npy::Array MakeArray(ir::DType dtype, std::vector<int64_t> shape);
std::string ShapeText(const std::vector<int64_t>& shape);
int64_t Product(const std::vector<int64_t>& dims, size_t begin, size_t end);

void RequireDtype(std::string_view step, const npy::Array& x, const char* what, std::initializer_list<ir::DType> ok);
void RequireFloat(std::string_view step, const npy::Array& x, const char* what);
// The array is self-consistent: data holds exactly its elements.
void RequireWellFormed(std::string_view step, const npy::Array& x, const char* what);
// `axis` in [-rank, rank) normalised to [0, rank).
int NormaliseAxis(std::string_view step, int axis, int rank);

// numpy broadcasting of two shapes; Error(kBadInput) when they do not.
std::vector<int64_t> BroadcastShape(std::string_view step, const std::vector<int64_t>& a,
                                    const std::vector<int64_t>& b);
// For each flat output index, the flat index into an operand of `shape`
// broadcast to `out`.
std::vector<int64_t> BroadcastIndex(const std::vector<int64_t>& shape, const std::vector<int64_t>& out);

// Reads an int32 or int64 index array as int64.
std::vector<int64_t> ReadIndices(std::string_view step, const npy::Array& indices);

}  // namespace gpuclean::pipeline::steps
