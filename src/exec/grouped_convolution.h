#pragma once
// A grouped convolution as converters write it for runtimes without grouped
// CONV_2D (our ONNX lowering, onnx2tf, ML Drift's own graph): a SPLIT (or a
// SPLIT_V of equal sizes) of the channels into G parts, one CONV_2D per part
// with the same geometry, and a CONCATENATION of their outputs in order. The
// interpreter runs the whole as one grouped CONV_2D (not where the
// CONCATENATION has a fused activation, on which LiteRT's kernels disagree): the split parts and the
// per-group outputs are never written, and one call replaces G small ones
// (regnet_y_400mf: 560 convolutions of 8 channels).
#include <vector>

#include "gpuclean/exec.h"
#include "gpuclean/ir.h"

namespace gpuclean::exec {

struct GroupedConvolution {
  int split = -1;          // the SPLIT or SPLIT_V op
  std::vector<int> convs;  // one CONV_2D per group, in channel order
  int concat = -1;         // the CONCATENATION of their outputs
  int32_t input = -1;      // the tensor split
};

// Every such pattern among the ops `runs` (per Invoke) whose filters,
// biases and split sizes are in `known` (fixed at prepare; their values in
// `tensors`, every shape there inferred) and whose intermediates nothing
// else reads. `stored_in_half`: per tensor, as the numeric mode stores it;
// a pattern whose parts are stored otherwise than its ends is left alone, as
// one op would skip a rounding.
std::vector<GroupedConvolution> FindGroupedConvolutions(const ir::Subgraph& graph, const std::vector<Tensor>& tensors,
                                                        const std::vector<int>& runs, const std::vector<bool>& known,
                                                        const std::vector<bool>& stored_in_half);

}  // namespace gpuclean::exec
