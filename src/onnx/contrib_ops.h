#pragma once
// onnxruntime's `com.microsoft` contrib ops that its transformer optimizer
// and many hub exports write (Gelu, FastGelu, BiasGelu, QuickGelu,
// SkipLayerNormalization, SkipSimplifiedLayerNormalization, FusedMatMul,
// FusedConv, Attention, MultiHeadAttention) and the default-domain
// SimplifiedLayerNormalization it registers, each expanded into the
// standard opset-17 ops that compute it, as onnxruntime's CPU kernels
// define it. Internal to src/onnx/ (it includes the ONNX protobuf classes).
#include <onnx/onnx_pb.h>

#include <string>

namespace gpuclean::onnx {

// True for the (domain, op type) pairs ExpandContribOps rewrites.
bool IsExpandedContribOp(const std::string& domain, const std::string& op_type);

// Rewrites every such node of the graph (and of nested graphs) into standard
// ops, in place. The model must already be in opset-17 form. Throws
// Error(kUnsupported) naming the node for a configuration it does not
// expand (Attention with a mask or past state, FusedMatMul over batch
// transposes, ...).
void ExpandContribOps(::onnx::ModelProto& model, const std::string& path);

}  // namespace gpuclean::onnx
