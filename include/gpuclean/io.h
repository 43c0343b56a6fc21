#pragma once
#include <cstdint>
#include <span>
#include <string>

namespace gpuclean {

// Writes `bytes` to a temporary file beside `path`, syncs it and renames it
// over `path`, so a reader never sees a half-written file.
void WriteFileAtomically(const std::string& path, std::span<const uint8_t> bytes);
void WriteFileAtomically(const std::string& path, const std::string& text);

// A fresh folder under the system's temporary directory, removed with
// everything in it when the object goes away.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& prefix = "gpuclean");
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }
  std::string str() const { return path_; }
  // path() + "/" + name
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace gpuclean
