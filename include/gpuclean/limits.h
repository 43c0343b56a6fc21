#pragma once
// Resource limits. A valid model can still ask for more memory than the
// machine has (a BROADCAST_TO to 10^12 elements, a [1, 2^31] input): every
// allocation sized by a model is checked against one process-wide limit
// before it is made, and refused with one line instead of an out-of-memory
// death or a swap storm.
#include <cstdint>
#include <string>
#include <string_view>

namespace gpuclean {

// Three quarters of the memory this process may use: the machine's physical
// memory, or less where a cgroup or an rlimit (ulimit -v) grants less.
uint64_t DefaultMemoryLimit();
// The limit in force: DefaultMemoryLimit() unless SetMemoryLimit chose one.
uint64_t MemoryLimit();
// 0 restores the default. The CLI sets it from --max-memory.
void SetMemoryLimit(uint64_t bytes);

// Throws Error(kUnsupported) "<what> needs 4.0 TB, more than the memory limit
// of 12 GB (--max-memory)" when `bytes` exceeds the limit, counting the
// bytes live MemoryCharges hold as already in use.
void CheckMemory(uint64_t bytes, std::string_view what);

// Model-sized memory a live object holds (an interpreter's arena, its folded
// constants): while it lives, CheckMemory counts it as in use, so a generated
// input or a second interpreter that fits the limit alone, but not beside
// the first, is refused before it is allocated.
class MemoryCharge {
 public:
  MemoryCharge() = default;
  ~MemoryCharge();
  MemoryCharge(const MemoryCharge&) = delete;
  MemoryCharge& operator=(const MemoryCharge&) = delete;
  // Counts `bytes` more as in use (after CheckMemory said they fit).
  void Add(uint64_t bytes);

 private:
  uint64_t bytes_ = 0;
};
// The bytes every live MemoryCharge holds together.
uint64_t MemoryInUse();

// "512 B", "9999 B", "12.3 kB", "4.0 TB" (powers of 1000, one decimal;
// exact below 10 kB).
std::string FormatBytes(uint64_t bytes);
// "1500000", "512M", "8G", "8GB", "2GiB", "1.5T": decimal units, binary with
// "i". Throws Error(kUsage) naming the text when it is not a size.
uint64_t ParseByteSize(std::string_view text);

}  // namespace gpuclean
