#include "gpuclean/runtime.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "gpuclean/error.h"

namespace gpuclean {

const char* RuntimeName(Runtime runtime) {
  switch (runtime) {
    case Runtime::kOurs: return "ours";
    case Runtime::kLiteRtWasm: return "litert-wasm";
    case Runtime::kLiteRtWebGpu: return "litert-webgpu";
    case Runtime::kOnnxRuntime: return "onnxruntime";
  }
  return "?";
}

Runtime ParseRuntime(const std::string& name, std::initializer_list<Runtime> accepted) {
  std::string names;
  for (Runtime r : accepted) {
    if (name == RuntimeName(r)) return r;
    names += names.empty() ? "" : ", ";
    names += RuntimeName(r);
  }
  throw Error(ErrorKind::kUsage, fmt::format("--runtime expects one of {}, got '{}'", names, name));
}

}  // namespace gpuclean
