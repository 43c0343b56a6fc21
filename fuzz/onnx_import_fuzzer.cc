// libFuzzer target for the ONNX importer and lowering (`gpuclean convert`
// up to the proof): any bytes are either imported and lowered to a TFLite
// graph, or refused with Error(kBadInput) or Error(kUnsupported) and one line
// of text. Import errors must name the source. Anything else (a crash, a
// sanitizer report, another exception, an Error of another kind, a message
// over several lines) is a finding.
//
// The bytes go through onnx::ImportBytes, the same path as Import minus the
// file read: external data is refused, nothing is read from disk.
//
// Built with -DGPUCLEAN_BUILD_FUZZERS=ON and clang; see tools/run_fuzz.sh.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <typeinfo>

#include "gpuclean/error.h"
#include "onnx/lowering.h"
#include "onnx/onnx_model.h"

namespace {

constexpr const char* kSource = "fuzz-input.onnx";

[[noreturn]] void Finding(const std::string& what) {
  std::fprintf(stderr, "onnx_import_fuzzer: %s\n", what.c_str());
  std::abort();
}

void CheckError(const gpuclean::Error& e, const char* stage, bool names_source) {
  const std::string message = e.what();
  if (e.kind() != gpuclean::ErrorKind::kBadInput && e.kind() != gpuclean::ErrorKind::kUnsupported)
    Finding(std::string(stage) + ": error of kind " + std::to_string(static_cast<int>(e.kind())) + ": " + message);
  if (names_source && message.find(kSource) == std::string::npos)
    Finding(std::string(stage) + ": message does not name the source: " + message);
  if (message.find_first_of("\n\r") != std::string::npos)
    Finding(std::string(stage) + ": message is not one line: " + message);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpuclean;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  onnx::Graph graph;
  try {
    graph = onnx::ImportBytes(bytes, kSource);
  } catch (const Error& e) {
    CheckError(e, "import", /*names_source=*/true);
    return 0;
  } catch (const std::exception& e) {
    Finding(std::string("import: ") + typeid(e).name() + ": " + e.what());
  }
  try {
    onnx::LoweredGraph lowered = onnx::Lower(graph, onnx::LowerOptions{});
    (void)lowered;
  } catch (const Error& e) {
    CheckError(e, "lower", /*names_source=*/false);
  } catch (const std::exception& e) {
    Finding(std::string("lower: ") + typeid(e).name() + ": " + e.what());
  }
  return 0;
}
