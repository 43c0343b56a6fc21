#pragma once
// A LayerNorm as converters write it (our ONNX lowering of
// LayerNormalization and of PyTorch's decomposed form, onnx2tf):
//   mu = MEAN(x), d = SUB(x, mu), s = MUL(d, d) or SQUARE(d), v = MEAN(s),
//   e = ADD(v, eps), r = RSQRT(e), y = MUL(d, r)
// with both MEANs over the last axis, keeping it, and eps a constant. Two
// users: fp16-fused numerics (fusion.cc: the GPU computes the whole as one
// kernel) and the fp32 interpreter (FuseLayerNorms: one pass per row).
#include <optional>
#include <vector>

#include "gpuclean/ir.h"

namespace gpuclean::exec {

struct LayerNormPattern {
  // Tensors: the input, the intermediates in the order above, the output.
  int32_t x = -1, mu = -1, d = -1, s = -1, v = -1, e = -1, r = -1, y = -1;
  int32_t epsilon = -1;  // the ADD's constant operand
  // Ops: the first MEAN, SUB, the square, the second MEAN, ADD, RSQRT and the
  // normalizing MUL.
  int mean = -1, sub = -1, square = -1, variance = -1, add = -1, rsqrt = -1, normalize = -1;

  std::vector<int32_t> Intermediates() const { return {mu, d, s, v, e, r}; }
  std::vector<int> InternalOps() const { return {mean, sub, square, variance, add, rsqrt}; }
};

// The pattern whose first MEAN is op `mean`, or nothing. Every intermediate
// is read by the pattern alone (d by the square and the normalizing MUL)
// and is not a graph output. The commutative ADD and MUL may take their
// operands in either order. `consumers`: graph.Consumers().
std::optional<LayerNormPattern> MatchLayerNorm(const ir::Subgraph& graph,
                                               const std::vector<std::vector<int>>& consumers, int mean);

}  // namespace gpuclean::exec
