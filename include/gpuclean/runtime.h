#pragma once
// The runtimes gpuclean runs a model on, named once: each command accepts
// the subset it can drive and refuses the rest by name.
#include <initializer_list>
#include <string>

namespace gpuclean {

// kOurs: the reference interpreter. kLiteRtWasm / kLiteRtWebGpu: LiteRT.js
// on its wasm CPU kernels / its WebGPU delegate in headless Chromium.
// kOnnxRuntime: onnxruntime-node's CPU provider, the oracle for .onnx files.
enum class Runtime { kOurs, kLiteRtWasm, kLiteRtWebGpu, kOnnxRuntime };

// "ours" | "litert-wasm" | "litert-webgpu" | "onnxruntime".
const char* RuntimeName(Runtime runtime);
// The runtime `name` names, if it is one of `accepted`; Error(kUsage)
// listing those otherwise.
Runtime ParseRuntime(const std::string& name, std::initializer_list<Runtime> accepted);

}  // namespace gpuclean
