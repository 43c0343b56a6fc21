#include "format/mapped_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "gpuclean/error.h"

namespace gpuclean::format {
namespace {

struct Mapping {
  void* address = nullptr;
  size_t size = 0;
  ~Mapping() {
    if (address) munmap(address, size);
  }
};

}  // namespace

Bytes MapFile(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(ErrorKind::kIo, fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    int err = errno;
    close(fd);
    throw Error(ErrorKind::kIo, fmt::format("{}: cannot stat: {}", path, std::strerror(err)));
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    ThrowBadInput(fmt::format("{}: not a regular file", path));
  }
  if (st.st_size == 0) {
    close(fd);
    ThrowBadInput(fmt::format("{}: file is empty", path));
  }
  auto mapping = std::make_shared<Mapping>();
  mapping->size = static_cast<size_t>(st.st_size);
  void* address = mmap(nullptr, mapping->size, PROT_READ, MAP_PRIVATE, fd, 0);
  int err = errno;
  close(fd);
  if (address == MAP_FAILED) throw Error(ErrorKind::kIo, fmt::format("{}: cannot map: {}", path, std::strerror(err)));
  mapping->address = address;
  const auto* data = static_cast<const uint8_t*>(address);
  return Bytes(std::shared_ptr<const void>(mapping, address), data, mapping->size);
}

}  // namespace gpuclean::format
