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

// Cuts model.main() into consecutive parts of at most about `max_ops`
// runtime ops each, in topological order (as balanced as the count
// allows): what a graph past a delegate's whole-graph compile ceiling is
// split into. One part when it fits. Error(kUsage) for max_ops < 1.
std::vector<Part> CutByOrder(const ir::Model& model, int max_ops);

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

// What the ops the GPU cannot take become. kCpuGraphs (what `convert
// --host-ops auto` writes): .tflite graphs with placement "cpu", run by
// LiteRT's CPU path (LiteRT.js wasm, CompiledModel with the CPU
// accelerator); any TFLite builtin gpuclean's interpreter runs can be in one
// (exec::RunsAsCpuGraphOp). kHostSteps: one host step per op
// (host_steps.h), for an app that runs no CPU graphs; only the ops a step
// computes can move.
enum class Islands { kCpuGraphs, kHostSteps };
const char* IslandsName(Islands islands);       // "cpu" | "steps"
Islands ParseIslands(const std::string& name);  // Error(kUsage) for another name

// Whether op `op` of `g` can be in an island of that kind; `why_not` says
// why not.
bool IslandCanHold(const ir::Subgraph& g, int op, Islands islands, std::string* why_not = nullptr);

// The ops `target`'s matrix keeps off the GPU (rejected, fallback) or marks
// as computed wrongly there (incorrect) that an island can hold: what
// --host auto moves. Such ops no island can hold are listed in `stays`,
// one line each.
std::vector<int> HostOpsForTarget(const ir::Model& model, const std::string& target, Islands islands,
                                  std::vector<std::string>* stays = nullptr);

struct HostCut {
  pipeline::Spec spec;  // files relative to the spec: STEM.graph<k>.tflite, STEM.const.<value>.npy
  std::vector<std::pair<std::string, ir::Model>> graphs;      // file name -> graph
  std::vector<std::pair<std::string, npy::Array>> constants;  // file name -> value
  Islands islands = Islands::kHostSteps;
  int host_ops = 0;    // ops in islands (one host step each with kHostSteps)
  int joined_ops = 0;  // of host_ops, those GrowHostIslands added
  int cpu_graphs = 0;  // kCpuGraphs: the islands' graphs
};
// `host_ops` plus the ops around them that belong with them:
// - forward: every op between them that an island can hold and that reads
//   island values only (constants count as available everywhere) and leads
//   to an island op - the index arithmetic between a TOPK_V2 and the
//   GATHER_ND it feeds (TILE, LESS, ADD, SELECT_V2, CONCATENATION of the
//   converted GatherElements) would otherwise be a GPU graph of its own;
// - backward (kCpuGraphs): integer and boolean chains whose every reader is
//   an island op (a BROADCAST_TO of indices, a CAST to int32 before a
//   GATHER): the GPU computes no index arithmetic a CPU graph needs.
std::vector<int> GrowHostIslands(const ir::Subgraph& g, const std::vector<int>& host_ops,
                                 Islands islands = Islands::kHostSteps);
// The float ops that compute what a selection in `island` (TOPK_V2,
// ARG_MAX, ARG_MIN) ranks - walking back from its scores through ops whose
// every reader is in the island or the walk, at most `max_ops` of them.
// Moved into the CPU graph, the ranking is computed in fp32 there: near-ties
// at the K-th place no longer flip with the GPU's half-precision rounding of
// the score head itself.
std::vector<int> SelectionScoreChains(const ir::Subgraph& g, const std::vector<int>& island, int max_ops = 8);

// Every op in `host_ops`, and those GrowHostIslands adds, goes to an
// island; the other runtime ops form GPU graphs, each op in the earliest
// graph its inputs allow. Error(kUsage) for an empty list, an op no island
// of that kind can hold (naming it and why), or (kHostSteps) a host op that
// reads a tensor computed from constants by another op.
HostCut CutHostIslands(const ir::Model& model, const std::vector<int>& host_ops, const std::string& file_stem,
                       Islands islands = Islands::kHostSteps);
// Each GPU graph of the cut linted and fixed for `target` (rewrite::Fix, every
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

// The whole-graph compile ceiling `target`'s matrix sets (its compile-ceiling
// rule's max_nodes), or nullopt when it sets none.
std::optional<int> CompileCeiling(const std::string& target);
// Each GPU graph of the cut with more compute nodes than `max_nodes` is
// replaced by consecutive GPU graphs under it (CutByOrder, with a tenth in
// reserve): stage graphN becomes graphN_1, graphN_2, ..., files
// STEM.graphN_<k>.tflite; the values between them are named after their
// tensors. Returns one line per graph split.
std::vector<std::string> SplitAtCompileCeiling(HostCut& cut, int max_nodes);
std::string DescribeCleanup(const std::vector<GraphCleanup>& cleanup, const std::string& target);
int ErrorsLeft(const std::vector<GraphCleanup>& cleanup);

// "3 host step(s)", "12 host step(s) (9 joined between them)", or
// "9 op(s) in 2 CPU graph(s) (4 joined)".
std::string HostStepSummary(const HostCut& cut);
// Stage by stage: each graph file with its op count, each host step with
// its parameters, and the values they read and write.
std::string DescribeHostCut(const pipeline::Spec& spec);
// Writes the graphs and constants beside PREFIX.pipeline.json, then the spec
// (last, atomically); sets cut.spec.path. Returns the spec's path. Each
// graph gets a signature named by its stage's values, so an app binds by
// name.
std::string WriteHostCut(HostCut& cut, const std::string& prefix);

}  // namespace gpuclean::split
