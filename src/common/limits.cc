#include "gpuclean/limits.h"

#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>

#include "gpuclean/error.h"

namespace gpuclean {
namespace {

std::atomic<uint64_t> chosen_limit{0};
std::atomic<uint64_t> charged{0};

}  // namespace

namespace {

// What a container or a shell's ulimit grants this process, when less than
// the machine has: cgroup v2's memory.max, v1's limit_in_bytes ("max" and
// v1's huge sentinel read as no limit), RLIMIT_AS and RLIMIT_DATA. Past such
// a limit an allocation fails (or the process is killed) long before the
// machine's memory runs out.
uint64_t GrantedMemory(uint64_t machine) {
  uint64_t granted = machine;
  for (const char* path : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    std::ifstream in(path);
    uint64_t value = 0;
    if (in >> value && value > 0) granted = std::min(granted, value);
  }
  for (int resource : {RLIMIT_AS, RLIMIT_DATA}) {
    rlimit limit{};
    if (getrlimit(resource, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
      granted = std::min<uint64_t>(granted, limit.rlim_cur);
  }
  return granted;
}

}  // namespace

uint64_t DefaultMemoryLimit() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  const uint64_t machine = pages <= 0 || page_size <= 0
                               ? uint64_t{4} << 30  // unknown machine: a phone-sized 4 GiB
                               : static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size);
  return GrantedMemory(machine) / 4 * 3;
}

uint64_t MemoryLimit() {
  const uint64_t chosen = chosen_limit.load(std::memory_order_relaxed);
  return chosen != 0 ? chosen : DefaultMemoryLimit();
}

void SetMemoryLimit(uint64_t bytes) { chosen_limit.store(bytes, std::memory_order_relaxed); }

void CheckMemory(uint64_t bytes, std::string_view what) {
  const uint64_t limit = MemoryLimit();
  const uint64_t in_use = MemoryInUse();
  if (bytes > limit)
    ThrowUnsupported(fmt::format("{} needs {}, more than the memory limit of {} (--max-memory)", what,
                                 FormatBytes(bytes), FormatBytes(limit)));
  if (bytes > limit - std::min(in_use, limit))
    ThrowUnsupported(
        fmt::format("{} needs {}, more than the memory limit of {} leaves beside the {} already in use "
                    "(--max-memory)",
                    what, FormatBytes(bytes), FormatBytes(limit), FormatBytes(in_use)));
}

MemoryCharge::~MemoryCharge() { charged.fetch_sub(bytes_, std::memory_order_relaxed); }

void MemoryCharge::Add(uint64_t bytes) {
  bytes_ += bytes;
  charged.fetch_add(bytes, std::memory_order_relaxed);
}

uint64_t MemoryInUse() { return charged.load(std::memory_order_relaxed); }

std::string FormatBytes(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"kB", "MB", "GB", "TB", "PB", "EB"};
  if (bytes < 10000) return fmt::format("{} B", bytes);  // exact where a limit is this small
  double value = static_cast<double>(bytes);
  int unit = -1;
  while (value >= 1000 && unit < 5) {
    value /= 1000;
    ++unit;
  }
  return fmt::format("{:.1f} {}", value, kUnits[unit]);
}

uint64_t ParseByteSize(std::string_view text) {
  auto bad = [&]() -> uint64_t {
    throw Error(ErrorKind::kUsage,
                fmt::format("'{}' is not a memory size (use bytes or a unit: 512M, 8G, 2GiB)", text));
  };
  double number = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (ec != std::errc() || !std::isfinite(number) || number <= 0) return bad();
  std::string unit(end, text.data() + text.size());
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (unit.ends_with("B") && unit.size() > 1) unit.pop_back();
  double scale = 1;
  const bool binary = unit.ends_with("I");
  if (binary) unit.pop_back();
  if (unit.empty() || unit == "B") {
    if (binary) return bad();
  } else if (unit.size() == 1) {
    const std::string_view prefixes = "KMGTP";
    const size_t power = prefixes.find(unit[0]);
    if (power == std::string_view::npos) return bad();
    scale = std::pow(binary ? 1024.0 : 1000.0, static_cast<double>(power + 1));
  } else {
    return bad();
  }
  const double bytes = number * scale;
  if (bytes < 1 || bytes > 1.8e19) return bad();
  return static_cast<uint64_t>(bytes);
}

}  // namespace gpuclean
