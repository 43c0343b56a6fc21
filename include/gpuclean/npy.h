#pragma once
// .npy (format 1.0 / 2.0, little-endian, C order): the only tensor
// interchange format gpuclean reads and writes.
#include <cstdint>
#include <string>
#include <vector>

#include "gpuclean/ir.h"

namespace gpuclean::npy {

struct Array {
  ir::DType dtype = tfl::TensorType_FLOAT32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;  // raw little-endian elements, C order

  int64_t num_elements() const;
  template <typename T>
  const T* as() const {
    return reinterpret_cast<const T*>(data.data());
  }
  template <typename T>
  T* as() {
    return reinterpret_cast<T*>(data.data());
  }
};

// Throws Error(kBadInput) naming `path` for anything that is not a supported
// .npy (big-endian, Fortran order, object arrays, truncated data...).
Array Read(const std::string& path);
Array Parse(const uint8_t* bytes, size_t size, const std::string& source);
std::vector<uint8_t> Encode(const Array& array);
void Write(const std::string& path, const Array& array);  // atomic

// numpy descr ("<f4") for a dtype; throws kUnsupported for types npy lacks.
std::string Descr(ir::DType dtype);

}  // namespace gpuclean::npy
