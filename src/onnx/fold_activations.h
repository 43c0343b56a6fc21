#pragma once
// A RELU, RELU6 or RELU_N1_TO_1 op whose input only it reads, written by a
// convolution, a FULLY_CONNECTED or an ADD/SUB/MUL, becomes that op's fused
// activation, as TFLite's own converter emits it: ONNX has no fused
// activations, so every Conv + Relu of an export arrives as two ops. One op
// less on the GPU and one pass less over the tensor on the CPU; the values
// are the same (the clamp commutes with rounding to half, so every numeric
// mode gives the same bits). Internal to src/onnx/.
#include <string>
#include <vector>

#include "gpuclean/ir.h"

namespace gpuclean::onnx {

// One op folded into the op that computes its input (here and in
// fold_bias.h).
struct FoldedOp {
  std::string gone;  // the producer's own output, no longer written
  std::string kept;  // the folded op's output, now the producer's
};

// The op writing each tensor (-1: none), and `graph` without the ops
// `drop` marks, removed at once (each fold leaves two writers of one
// tensor until its op goes): the two steps every fold here shares.
std::vector<int> ProducerOfEachTensor(const ir::Subgraph& graph);
// The op's fused activation field: CONV_2D, DEPTHWISE_CONV_2D,
// FULLY_CONNECTED, ADD, SUB and MUL have one; null for other ops.
tfl::ActivationFunctionType* FusedActivationField(ir::Op& op);
void DropOps(ir::Subgraph& graph, const std::vector<bool>& drop);

// Folds every such pair in `graph`: the activation's output tensor, with its
// name, becomes the producer's output; the producer's own output tensor is
// left unreferenced.
std::vector<FoldedOp> FoldActivations(ir::Subgraph& graph);

}  // namespace gpuclean::onnx
