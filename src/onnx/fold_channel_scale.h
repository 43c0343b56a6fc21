#pragma once
// A MUL of a convolution's or FULLY_CONNECTED's output by one constant per
// output channel (or one for all) becomes part of its weights and bias, as
// TFLite's converter and onnxruntime's Conv+BatchNormalization fusion do:
// an exporter that keeps BatchNormalization apart (Paddle2ONNX: PP-OCR's
// classifier has 69 such MUL + ADD pairs, half its run time) arrives here as
// CONV_2D, MUL(scale), ADD(shift); after this fold and fold_bias.h's, one
// CONV_2D with a bias. Each weight is rounded once more (w * s); the
// convert's proof against onnxruntime covers the difference.
//
// Weights that are all whole numbers are left alone: they are a quantized
// model's codes, whose scale dot-scale-first and the interpreter's 8-bit
// convolution need apart. Internal to src/onnx/.
#include <vector>

#include "gpuclean/ir.h"
#include "onnx/fold_activations.h"

namespace gpuclean::onnx {

// Folds every such pair in `graph`: the MUL's output tensor, with its name,
// becomes the producer's output; the producer's own output is left
// unreferenced, its weights (and bias) replaced by new constants.
std::vector<FoldedOp> FoldChannelScales(ir::Subgraph& graph);

}  // namespace gpuclean::onnx
