#pragma once
// Exact GELU as exporters write it, x * 0.5 * (1 + Erf(x / sqrt 2)) (PyTorch's
// nn.GELU, the opset-20 Gelu and the com.microsoft Gelu once expanded), found
// in the imported graph and replaced by one Gelu node, which lowers to
// TFLite's builtin GELU: one kernel where the decomposed form lowers Erf to
// 22 ops over the network's widest tensors. Internal to src/onnx/.
#include "onnx/onnx_model.h"

namespace gpuclean::onnx {

// Replaces every match in `graph`'s top level; returns how many.
int FuseExactGelu(Graph& graph);

}  // namespace gpuclean::onnx
