#pragma once
// Named synthetic graphs, built with the builder, that users and tests push
// through lint, probe and bisect (`gpuclean synth NAME... --out DIR`,
// docs/synth.md):
//
//  - micro-probes: one tiny graph per lint rule that triggers it, and its
//    near-miss `<name>.ok` that does not (a few hundred bytes each). Written
//    in one batch they measure the real delegate's verdict per rule.
//  - fp16 patterns: the numeric failure classes of FACTS.md §2 at the
//    magnitudes reported on phones, each with its fixed form `<name>.fixed`
//    and a documented input `<name>.in0.npy` that triggers the failure.
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuclean/ir.h"
#include "gpuclean/lint.h"
#include "gpuclean/npy.h"

namespace gpuclean::synth {

enum class Group { kProbe, kPattern };
std::string_view GroupName(Group group);  // "probe" | "pattern"

// What `gpuclean bisect --b fp16-compute` should report on a broken pattern.
struct ExpectedBreak {
  std::string op;     // first break op ("MEAN")
  std::string cause;  // analyze::CauseName ("overflow")
  std::string fix;    // pass id ("safe-layernorm-v2")
};

struct SynthGraph {
  std::string name;  // "rank5-reshape", "rank5-reshape.ok", "layernorm-256.fixed"
  Group group = Group::kProbe;
  bool fixed = false;       // the near-miss (`.ok`) or the fixed form (`.fixed`)
  std::string counterpart;  // the other half of the pair
  std::string shows;        // one line: what the graph shows
  // Probes: the lint rule the bad graph triggers, and the target whose
  // matrix configures it (the near-miss carries the same two).
  std::string rule;
  std::string target;
  ExpectedBreak expected;  // broken patterns only
  std::string input_doc;   // patterns: how in0 is made (docs/synth.md)
  std::function<ir::Model()> build;
  // Patterns: the inputs that trigger the failure, in graph input order.
  std::function<std::vector<npy::Array>()> inputs;
};

// Every graph, probes first, each bad graph followed by its counterpart.
const std::vector<SynthGraph>& Catalog();
// nullptr when unknown.
const SynthGraph* Find(std::string_view name);
// Builds a graph by name; Error(kUsage) listing the valid names if unknown.
ir::Model Build(std::string_view name);

// Expands names: "probes" (every micro-probe), "patterns" (every fp16
// pattern), "all", or single names; order kept, duplicates dropped.
// Error(kUsage) naming the bad name and listing the valid ones.
std::vector<const SynthGraph*> Resolve(const std::vector<std::string>& names);

struct Written {
  std::string model;                // DIR/<name>.tflite
  std::vector<std::string> inputs;  // DIR/<name>.in<i>.npy (patterns)
};
// Writes the model and, for patterns, its inputs; creates DIR.
Written Write(const SynthGraph& graph, const std::string& dir);

// Uniform values in [lo, hi) from a 32-bit integer hash of (seed, element
// index): the documented generator of every pattern input, reproducible in
// any language (docs/synth.md gives the hash).
npy::Array HashUniform(std::vector<int64_t> shape, float lo, float hi, uint32_t seed);

// Rule-edge probes derived from a target's matrix (`gpuclean synth --edges
// TARGET`): for every op entry whose `when` synth can realise, the op's
// plain graph (inside the edge: the op's base entry decides) and the same
// graph changed just enough for the entry's constraints to hold (one step
// past: the entry decides). The probed node is the last op of both.
struct RuleEdgeProbe {
  std::string entry;  // matrix entry id
  std::string op;
  ir::Model inside;
  ir::Model past;
};
struct RuleEdgeSet {
  std::vector<RuleEdgeProbe> probes;
  std::vector<std::string> skipped;  // "entry-id: why synth cannot build it"
};
RuleEdgeSet RuleEdgeProbes(const lint::Matrix& matrix);
// The plain graph of one op (its name as the matrix spells it): inputs, the
// op, its output; nullopt where synth has none. Throws where the builder
// cannot shape it.
std::optional<ir::Model> PlainGraph(const std::string& op);
// The graph that measures one op on a runtime (`gpuclean synth --ops`): the
// plain graph, or for ops that take or give bools, the op between
// comparisons that make them and a CAST back to float32.
std::optional<ir::Model> OpGraph(tfl::BuiltinOperator code);

}  // namespace gpuclean::synth
