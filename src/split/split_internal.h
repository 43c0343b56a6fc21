#pragma once
// What the tensor cut (split.cc), the host-island cut (host_cut.cc) and its
// graph clean-up (clean_graphs.cc) share.
#include <functional>
#include <string>
#include <vector>

#include "gpuclean/split.h"
#include "gpuclean/valid_rows.h"

namespace gpuclean::split::internal {

// Per tensor of `g`: its value follows from constants alone (DENSIFY of
// sparse weights, DEQUANTIZE of fp16 weights, shape arithmetic).
std::vector<bool> ConstantValued(const ir::Subgraph& g, const std::vector<int>& order);

// The graph of the runtime ops with stage[op] == p, plus the constant-valued
// producers they read: inputs are the graph inputs they read and the tensors
// other stages produce; outputs are graph outputs and what later stages read.
Part MakePart(const ir::Model& model, const std::vector<int>& stage, const std::vector<bool>& constant,
              const std::vector<int>& order, int p, const std::string& description);

// The model's padded outputs (valid_rows metadata) under the names the
// pipeline gives its outputs (`name_of` a graph tensor).
std::vector<PaddedOutput> PaddedOutputsNamed(const ir::Model& model,
                                             const std::function<std::string(int32_t)>& name_of);

// `value` with every character but letters, digits, '-' and '_' as '_':
// for file names made from tensor names.
std::string FileSafe(const std::string& value);

}  // namespace gpuclean::split::internal
