#pragma once
// The edit session every pass uses: append replacement ops with the
// builder's typed methods, then say which old op they replace. Commit()
// moves each replacement's value into the old op's output tensors (so names,
// graph outputs and signatures keep pointing at the same tensors), drops the
// replaced ops and whatever became unreferenced, restores topological order
// and validates.
//
//   GraphEdit edit(model, "gelu-tanh");
//   for (int node : matches) {
//     int x = edit.graph().ops[node].inputs[0];
//     int y = edit.b().Mul(x, ...);
//     edit.Replace(node, {y});
//   }
//   edit.Commit();
#include <map>
#include <string>
#include <vector>

#include "gpuclean/builder.h"
#include "gpuclean/ir.h"
#include "gpuclean/npy.h"
#include "gpuclean/op_table.h"
#include "gpuclean/rewrite.h"

namespace gpuclean::rewrite {

class GraphEdit {
 public:
  // Edits model.main(); new tensors are named "<pass_id>/<op>_<n>".
  GraphEdit(ir::Model& model, const std::string& pass_id);
  ~GraphEdit();
  GraphEdit(const GraphEdit&) = delete;
  GraphEdit& operator=(const GraphEdit&) = delete;

  builder::GraphBuilder& b() { return builder_; }
  const ir::Subgraph& graph() const { return builder_.graph(); }
  ir::Subgraph& mutable_graph() { return builder_.mutable_graph(); }
  const std::string& prefix() const { return prefix_; }

  // Output k of op `node` takes the value of replacements[k] (same dtype and
  // shape, produced by an op added in this edit, or any existing tensor).
  void Replace(int node, std::vector<int> replacements);
  // Drops op `node` whose outputs nothing reads any more.
  void Remove(int node);
  // A float32 constant named "<pass_id>/<name>".
  int ConstF32(const std::string& name, std::vector<int32_t> shape, const std::vector<float>& values);
  // A float32 scalar constant named "<pass_id>/<name>", made once per edit
  // however many sites ask for it.
  int SharedScalarF32(const std::string& name, float value);
  // A graph input named "<pass_id>/<name>" appended to the graph's inputs.
  int Input(const std::string& name, ir::DType dtype, std::vector<int32_t> shape);
  // A [1] float32 graph input the host feeds with `value` (add-output-alias's
  // `one`): the input, and its HostInput for PassResult::host_inputs.
  std::pair<int, HostInput> ScalarHostInput(const std::string& name, float value);

  // Applies the replacements (and, after any edit, drops what nothing
  // references any more) and hands the graph back to the model. Throws
  // Error(kInternal) when the result breaks an invariant (a pass bug).
  void Commit();

 private:
  ir::Model& model_;
  std::string prefix_;
  builder::GraphBuilder builder_;
  std::vector<std::pair<int, std::vector<int>>> replaced_;
  std::vector<int> removed_;
  std::map<std::string, int> shared_scalars_;
  bool inputs_added_ = false;
  bool committed_ = false;
};

// Small queries passes share.
// The op's only consumer, or -1 when it has none, several, or is a graph output.
int SoleConsumer(const ir::Subgraph& graph, int tensor);
// Float values of a float32 (or float16) constant; empty when `tensor` is not one.
std::vector<float> ConstFloats(const ir::Subgraph& graph, int tensor);
// Int values of an int32/int64 constant; empty when `tensor` is not one.
std::vector<int64_t> ConstInts(const ir::Subgraph& graph, int tensor);
// The scalar value of a one-element float constant, if it is one.
std::optional<float> ConstScalar(const ir::Subgraph& graph, int tensor);
// Whether every value `tensor` depends on is a constant (it may be computed
// by ops, e.g. DENSIFY or BROADCAST_TO of a constant).
bool IsConstantValued(const ir::Subgraph& graph, int tensor);
// IsConstantValued for every tensor at once, each resolved once.
std::vector<bool> ConstantValuedTensors(const ir::Subgraph& graph);
// False when an ADD, SUB, MUL or DIV fuses an activation; true for every other op.
bool HasNoFusedActivation(const ir::Op& op);
// The single-output op writing `tensor` when it has this code and no fused
// activation; nullptr otherwise (a graph input, a constant, another op).
const ir::Op* ProducerWithoutActivation(const ir::Subgraph& graph, int tensor, tfl::BuiltinOperator code);
// Two operands, per element, right-aligned broadcasting (the op table's).
using ir::IsBinaryElementwise;
// The value of a constant-valued tensor, computed by the interpreter from
// just the ops it depends on. Throws Error(kUnsupported) when it cannot.
npy::Array EvaluateConstant(const ir::Subgraph& graph, int tensor);

}  // namespace gpuclean::rewrite
