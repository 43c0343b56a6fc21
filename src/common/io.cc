#include "gpuclean/io.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "gpuclean/error.h"

namespace gpuclean {

void WriteFileAtomically(const std::string& path, std::span<const uint8_t> bytes) {
  std::string tmp = path + ".tmp.XXXXXX";
  int fd = mkstemp(tmp.data());
  if (fd < 0) throw Error(ErrorKind::kIo, fmt::format("{}: cannot create: {}", path, std::strerror(errno)));
  auto fail = [&](const char* what) {
    int err = errno;
    close(fd);
    unlink(tmp.c_str());
    throw Error(ErrorKind::kIo, fmt::format("{}: cannot {}: {}", path, what, std::strerror(err)));
  };
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("write");
    }
    done += static_cast<size_t>(n);
  }
  if (fchmod(fd, 0644) != 0) fail("set permissions on");
  if (fsync(fd) != 0) fail("sync");
  if (close(fd) != 0) {
    int err = errno;
    unlink(tmp.c_str());
    throw Error(ErrorKind::kIo, fmt::format("{}: cannot close: {}", path, std::strerror(err)));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    unlink(tmp.c_str());
    throw Error(ErrorKind::kIo, fmt::format("{}: cannot rename into place: {}", path, std::strerror(err)));
  }
}

void WriteFileAtomically(const std::string& path, const std::string& text) {
  WriteFileAtomically(path, std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
}

ScratchDir::ScratchDir(const std::string& prefix) {
  std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
  if (!mkdtemp(pattern.data()))
    throw Error(ErrorKind::kIo, fmt::format("cannot create a temporary folder {}: {}", pattern, std::strerror(errno)));
  path_ = pattern;
}

ScratchDir::~ScratchDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace gpuclean
