#pragma once
// `gpuclean split`: cut a graph at named tensors into a chain of graphs, and
// prove that running the chain reproduces the monolith bit for bit
// (docs/rewrite.md#split).
//
// Each op goes into the earliest part its inputs allow: an op that reads cut
// tensor j (or anything computed from it) runs after cut j. Ops computed from
// constants only are copied into every part that needs them, so weights never
// cross a cut. Tensors that cross a cut besides the named ones (skip
// connections) become extra outputs/inputs and are listed in the chain.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuclean/ir.h"

namespace gpuclean::split {

struct Part {
  ir::Model model;
  // Tensor names (the original graph's), in the part's input/output order.
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  // Per input: -1 for an input of the original graph, else the part that
  // produces it.
  std::vector<int> input_from;
  int ops = 0;
};

// Cuts model.main() at the tensors named in `at`. Error(kUsage) for a name
// the graph lacks, a tensor no op computes (input, constant), or a cut that
// leaves a part empty.
std::vector<Part> Cut(const ir::Model& model, const std::vector<std::string>& at);

struct Proof {
  bool bit_exact = true;
  std::vector<std::string> mismatches;  // one line per output that differs
  int outputs = 0;
};
// Runs the monolith and the chain on the documented seeded inputs
// (exec::GenerateInput) and compares every graph output byte for byte.
Proof ProveChain(const ir::Model& model, const std::vector<Part>& parts, uint32_t seed);

// Writes PREFIX.part<k>.tflite (k from 1) and PREFIX.chain.json; returns the
// model files.
std::vector<std::string> WriteParts(const std::vector<Part>& parts, const std::string& prefix,
                                    const nlohmann::json& chain);
nlohmann::json ChainJson(const ir::Model& model, const std::vector<Part>& parts, const std::vector<std::string>& files,
                         const Proof& proof);
// Step by step: which file to run with which inputs, what to feed forward.
std::string DescribeChain(const ir::Model& model, const std::vector<Part>& parts,
                          const std::vector<std::string>& files);

}  // namespace gpuclean::split
