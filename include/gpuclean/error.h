#pragma once
// Errors that reach the user. Every error carries one line of text that names
// what is wrong; the CLI prints it and maps the kind to an exit code.
#include <stdexcept>
#include <string>

namespace gpuclean {

enum class ErrorKind {
  kBadInput,     // the model or a data file is malformed (exit 2)
  kUsage,        // bad flags or arguments (exit 2)
  kUnsupported,  // valid input we cannot handle, e.g. an op without a kernel (exit 2)
  kIo,           // the file system refused (exit 2)
  kInternal,     // a bug of ours: an invariant broke
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, std::string message) : std::runtime_error(std::move(message)), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

[[noreturn]] inline void ThrowBadInput(std::string message) { throw Error(ErrorKind::kBadInput, std::move(message)); }
[[noreturn]] inline void ThrowUnsupported(std::string message) {
  throw Error(ErrorKind::kUnsupported, std::move(message));
}
[[noreturn]] inline void ThrowInternal(std::string message) { throw Error(ErrorKind::kInternal, std::move(message)); }

}  // namespace gpuclean
