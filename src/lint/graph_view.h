#pragma once
// What the rules and the constraint matcher ask of a subgraph, computed once:
// consumers, producers, and which tensors the delegate sees as constants.
#include <optional>
#include <string>
#include <vector>

#include "gpuclean/ir.h"
#include "nlohmann/json.hpp"

namespace gpuclean::lint {

struct GraphView {
  explicit GraphView(const ir::Subgraph& graph);

  const ir::Subgraph& graph;
  std::vector<int> producer;                // per tensor, -1 if none
  std::vector<std::vector<int>> consumers;  // per tensor
  std::vector<bool> graph_output;           // per tensor

  // A constant, or the output of a DEQUANTIZE of a constant: delegates read
  // fp16 weights behind a DEQUANTIZE as constants of the consuming op.
  bool IsConstLike(int tensor) const;
  // Present (not omitted) inputs of op `node` that are runtime tensors.
  int RuntimeInputCount(int node) const;
  std::string TensorName(int tensor) const;
  bool IsDynamic(int tensor) const;
};

// The value of an option field of `op` by its schema name ("align_corners"):
// bool, number, or the enum value's name. Null when the op has no such field.
nlohmann::json OptionValue(const ir::Op& op, const std::string& field);

// Sets one scalar option field by its schema name (the inverse of
// OptionValue; an enum takes its name or its integer value). False when
// the op has no options table or no such scalar field.
bool SetOptionValue(ir::Op& op, const std::string& field, const nlohmann::json& value);

// Constraint keys an entry's `when` may use (docs/lint.md).
const std::vector<std::string>& ConstraintKeys();
// What is wrong with a constraint's value ("" when it has the shape its key
// takes), so a matrix typo is a validation error, not a failed lookup.
std::string ConstraintValueError(const std::string& key, const nlohmann::json& value);
// True when every constraint in `when` holds for node `node`.
bool Matches(const GraphView& view, int node, const nlohmann::json& when);

}  // namespace gpuclean::lint
