#pragma once
// An immutable view of bytes plus whatever keeps them alive: the memory map of
// the model file for weights read from disk, or an owned vector for constants
// we computed. Copying a Bytes never copies the data.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace gpuclean {

class Bytes {
 public:
  Bytes() = default;
  Bytes(std::shared_ptr<const void> owner, const uint8_t* data, size_t size)
      : owner_(std::move(owner)), data_(data), size_(size) {}

  static Bytes Own(std::vector<uint8_t> bytes) {
    auto holder = std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
    return Bytes(holder, holder->data(), holder->size());
  }
  static Bytes Copy(std::span<const uint8_t> bytes) { return Own(std::vector<uint8_t>(bytes.begin(), bytes.end())); }
  template <typename T>
  static Bytes FromValues(std::span<const T> values) {
    auto raw = std::as_bytes(values);
    return Copy({reinterpret_cast<const uint8_t*>(raw.data()), raw.size()});
  }

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::span<const uint8_t> span() const { return {data_, size_}; }
  template <typename T>
  std::span<const T> as() const {
    return {reinterpret_cast<const T*>(data_), size_ / sizeof(T)};
  }
  const std::shared_ptr<const void>& owner() const { return owner_; }

 private:
  std::shared_ptr<const void> owner_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace gpuclean
