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
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuclean/ir.h"
#include "gpuclean/npy.h"
#include "gpuclean/pipeline.h"

namespace gpuclean::split {

struct Part {
  ir::Model model;
  // Tensor names (the original graph's), in the part's input/output order.
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  // Per input: -1 for an input of the original graph, else the part that
  // produces it.
  std::vector<int> input_from;
  // The original graph's tensor indices of those inputs and outputs.
  std::vector<int> input_tensors;
  std::vector<int> output_tensors;
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

// Writes PREFIX.part<k>.tflite (k from 1) and PREFIX.pipeline.json (the
// spec ChainJson made); returns the model files.
std::vector<std::string> WriteParts(const std::vector<Part>& parts, const std::string& prefix,
                                    const nlohmann::json& spec);
// The chain as a pipeline spec (pipeline.h, docs/pipeline.md): one "gpu"
// graph stage per part, named part<k>, wired by the original tensor names,
// with the proof under "proof". `files` are the parts' paths (empty: not
// written).
nlohmann::json ChainJson(const ir::Model& model, const std::vector<Part>& parts, const std::vector<std::string>& files,
                         const Proof& proof);
// Step by step: which file to run with which inputs, what to feed forward.
std::string DescribeChain(const ir::Model& model, const std::vector<Part>& parts,
                          const std::vector<std::string>& files);

// ---------------------------------------------------------------- host islands
// `split --host`: ops a GPU graph cannot take (a top-K over proposal scores,
// a gather by runtime indices) run on the host between graphs. The result is
// a pipeline (pipeline.h): graph stages alternate with host stages, one host
// step per op, with the semantics of that op (host_steps.h).

// The host step that computes `op` as the op does, or nullopt with the reason
// in `why_not` (a fused activation, a k that is not a constant, ...).
struct HostStep {
  std::string step;
  nlohmann::json params;
  std::vector<int> inputs;   // tensor indices the step reads, in its order
  std::vector<int> outputs;  // tensor indices it writes
};
std::optional<HostStep> HostStepFor(const ir::Subgraph& g, int op, std::string* why_not = nullptr);

// The runtime ops whose type is one of `types` (TFLite names: TOPK_V2, GATHER).
// Error(kUsage) for a name that is no TFLite op.
std::vector<int> OpsOfTypes(const ir::Subgraph& g, const std::vector<std::string>& types);

// The ops `target`'s matrix keeps off the GPU (rejected, fallback) or marks
// as computed wrongly there (incorrect) that a host step computes: what
// --host auto moves. Such ops without a host step are listed in `stays`,
// one line each.
std::vector<int> HostOpsForTarget(const ir::Model& model, const std::string& target,
                                  std::vector<std::string>* stays = nullptr);

struct HostCut {
  pipeline::Spec spec;  // files relative to the spec: STEM.graph<k>.tflite, STEM.const.<value>.npy
  std::vector<std::pair<std::string, ir::Model>> graphs;      // file name -> graph
  std::vector<std::pair<std::string, npy::Array>> constants;  // file name -> value
  int host_ops = 0;
  int joined_ops = 0;  // of host_ops, those GrowHostIslands added
};
// `host_ops` plus every op between them that a host step computes from
// host values only: the index arithmetic between a TOPK_V2 and the
// GATHER_ND it feeds (TILE, LESS, ADD, SELECT_V2, CONCATENATION of the
// converted GatherElements) would otherwise be a GPU graph of its own. An
// op joins when all its runtime inputs come from host ops and one of its
// outputs leads to a host op; constants count as available everywhere.
std::vector<int> GrowHostIslands(const ir::Subgraph& g, const std::vector<int>& host_ops);
// Every op in `host_ops`, and those GrowHostIslands adds, becomes a host
// step; the other runtime ops form graphs, each op in the earliest graph its
// inputs allow. Error(kUsage) for an empty list, an op without a host step
// (naming it and why), or a host op that reads a tensor computed from
// constants by another op.
HostCut CutHostIslands(const ir::Model& model, const std::vector<int>& host_ops, const std::string& file_stem);
// Each graph of the cut linted and fixed for `target` (rewrite::Fix, every
// pass proven): the cut's own outputs can break a GPU rule the monolith
// kept (a [1,N,C] token output also read inside the graph). Fixed graphs
// replace the cut's; a host input a rewrite adds (the "x * one" of
// token-output-leaf) becomes a pipeline constant, its value named
// "<stage>:<input>".
struct GraphCleanup {
  std::string graph;
  int errors_before = 0, errors_after = 0;
  std::vector<std::string> passes;     // "token-output-leaf (1 site(s))"
  std::vector<std::string> remaining;  // one line per error left, with why
  std::string failure;                 // why the graph is kept as cut (fix not proven, or cannot run)
};
std::vector<GraphCleanup> CleanGraphs(HostCut& cut, const std::string& target);
std::string DescribeCleanup(const std::vector<GraphCleanup>& cleanup, const std::string& target);
int ErrorsLeft(const std::vector<GraphCleanup>& cleanup);

// "3 host step(s)", or "12 host step(s) (9 joined between them)".
std::string HostStepSummary(const HostCut& cut);
// Stage by stage: each graph file with its op count, each host step with
// its parameters, and the values they read and write.
std::string DescribeHostCut(const pipeline::Spec& spec);
// Writes the graphs and constants beside PREFIX.pipeline.json, then the spec
// (last, atomically); sets cut.spec.path. Returns the spec's path.
std::string WriteHostCut(HostCut& cut, const std::string& prefix);

}  // namespace gpuclean::split
