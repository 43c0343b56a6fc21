#pragma once
// Quantized ONNX models as float graphs that compute the same numbers:
// QuantizeLinear / DequantizeLinear pairs (onnxruntime's QDQ format),
// DynamicQuantizeLinear with ConvInteger / MatMulInteger (its dynamic
// quantizer), and QLinearConv / QLinearMatMul (its QOperator format).
// A quantized tensor becomes a float tensor holding the integer codes
// (exact below 2^24), so quantization is computed as fake-quant: constant
// weights are dequantized at convert time by folding, and activations are
// rounded and clamped to their codes where the model quantizes them.
// Internal to src/onnx/ (it includes the ONNX protobuf classes).
#include <onnx/onnx_pb.h>

#include <string>

namespace gpuclean::onnx {

// True for the (domain, op type) pairs ExpandQuantizedOps rewrites.
bool IsExpandedQuantizedOp(const std::string& domain, const std::string& op_type);

// Rewrites every such node of the graph (and of nested graphs) into
// standard float ops, in place; the model must be in opset-17 form. Throws
// Error(kUnsupported) naming the node for a form it does not expand
// (blocked quantization, a per-axis activation zero point of unknown rank).
// Returns how many nodes it expanded.
int ExpandQuantizedOps(::onnx::ModelProto& model, const std::string& path);

}  // namespace gpuclean::onnx
