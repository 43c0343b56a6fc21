#pragma once
// Graph outputs whose length depends on the data (detections after NMS, the
// hits of a NonZero): the graph holds the most rows the output can have and
// an int32 output that counts the valid ones, which come first. The pairing
// travels in the model's metadata, so every runner cuts the same rows.
#include <string>
#include <vector>

#include "gpuclean/ir.h"
#include "gpuclean/npy.h"

namespace gpuclean {

// Metadata entry: {"<output tensor>": {"axis": a, "count": "<count output>"}},
// the axis in the ONNX layout (the layout runners hand outputs back in).
constexpr const char* kValidRowsMetadata = "gpuclean.valid_rows";

struct PaddedOutput {
  std::string output;
  int axis = 0;
  std::string count;
};

// Throws kBadInput when the entry is not the JSON convert writes.
std::vector<PaddedOutput> ReadPaddedOutputs(const ir::Model& model);
void WritePaddedOutputs(ir::Model& model, const std::vector<PaddedOutput>& padded);

// `outputs[k]` holds graph output k of `graph` (`padded` from its model):
// each padded output cut to the rows its count output says are valid.
// Throws kBadInput when a count is negative or above the bound.
void TrimToValidRows(const ir::Subgraph& graph, const std::vector<PaddedOutput>& padded,
                     std::vector<npy::Array>& outputs);

// `a` cut to its first `rows` along `axis`.
npy::Array FirstRows(const npy::Array& a, int axis, int64_t rows);

}  // namespace gpuclean
