// libFuzzer target for the model loader: any bytes either load or are refused
// with Error(kBadInput) and one line naming the source; a model that loads
// can be summarised (inspect), and written, read back and written again with
// the same bytes. Anything else (a crash, a sanitizer report, another
// exception, a broken property) is a finding.
//
// Built with -DGPUCLEAN_BUILD_FUZZERS=ON and clang; see tools/run_fuzz.sh.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "gpuclean/error.h"
#include "gpuclean/format.h"
#include "gpuclean/inspect.h"

namespace {

constexpr const char* kSource = "fuzz-input";

[[noreturn]] void Finding(const std::string& what) {
  std::fprintf(stderr, "load_model_fuzzer: %s\n", what.c_str());
  std::abort();
}

// Errors from the reader must be kBadInput and one line that names the source.
void CheckReadError(const gpuclean::Error& e, const char* stage) {
  const std::string message = e.what();
  if (e.kind() != gpuclean::ErrorKind::kBadInput)
    Finding(std::string(stage) + ": error of kind " + std::to_string(static_cast<int>(e.kind())) + ": " + message);
  if (message.rfind(std::string(kSource) + ": ", 0) != 0 && message.rfind("round-trip: ", 0) != 0)
    Finding(std::string(stage) + ": message does not start with the source: " + message);
  if (message.find_first_of("\n\r") != std::string::npos)
    Finding(std::string(stage) + ": message is not one line: " + message);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpuclean;
  // The bytes are borrowed: `data` outlives every use of the model below.
  const Bytes bytes(nullptr, data, size);
  ir::Model model;
  try {
    model = format::ReadModelBytes(bytes, kSource);
  } catch (const Error& e) {
    CheckReadError(e, "read");
    return 0;
  }

  inspect::RenderText(inspect::Summarize(model));

  std::vector<uint8_t> written;
  try {
    written = format::Serialize(model);
  } catch (const Error& e) {
    // The writer refuses models holding content it would drop.
    if (e.kind() == ErrorKind::kUnsupported && !model.unpreservable.empty()) return 0;
    Finding(std::string("serialize: ") + e.what());
  }
  ir::Model again;
  try {
    again = format::ReadModelBytes(Bytes(nullptr, written.data(), written.size()), "round-trip");
  } catch (const Error& e) {
    CheckReadError(e, "re-read");
    Finding(std::string("our own output does not read back: ") + e.what());
  }
  std::vector<uint8_t> rewritten;
  try {
    rewritten = format::Serialize(again);
  } catch (const Error& e) {
    Finding(std::string("re-serialize: ") + e.what());
  }
  if (rewritten != written) Finding("write -> read -> write changed the bytes");
  return 0;
}
