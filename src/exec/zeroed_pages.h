#pragma once
// Zero-filled memory straight from the kernel, for the interpreter's arena
// (hundreds of MB at 1024x1024): no second zeroing pass in user space, and
// transparent huge pages asked for, so a first run takes one fault per 2 MB
// instead of one per 4 KB.
#include <sys/mman.h>

#include <cstddef>
#include <cstdlib>
#include <new>
#include <utility>

namespace gpuclean::exec {

class ZeroedPages {
 public:
  ZeroedPages() = default;
  // At least one byte, so that data() is never null.
  explicit ZeroedPages(size_t bytes) : size_(bytes < 1 ? 1 : bytes) {
    if (size_ < kHugePage) {  // calloc: small blocks share pages (a mapping each would exhaust the map count)
      data_ = static_cast<unsigned char*>(std::calloc(size_, 1));
      if (!data_) throw std::bad_alloc();
      return;
    }
    void* p = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    madvise(p, size_, MADV_HUGEPAGE);  // advice only: ignored where THP is off
    data_ = static_cast<unsigned char*>(p);
  }
  ZeroedPages(ZeroedPages&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  ZeroedPages& operator=(ZeroedPages&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    return *this;
  }
  ZeroedPages(const ZeroedPages&) = delete;
  ZeroedPages& operator=(const ZeroedPages&) = delete;
  ~ZeroedPages() {
    if (!data_) return;
    if (size_ < kHugePage)
      std::free(data_);
    else
      munmap(data_, size_);
  }
  unsigned char* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  static constexpr size_t kHugePage = size_t{2} << 20;
  unsigned char* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace gpuclean::exec
