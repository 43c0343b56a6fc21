#include "rewrite/graph_edit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <set>

#include "gpuclean/error.h"
#include "gpuclean/exec.h"
#include "gpuclean/half.h"
#include "gpuclean/shapes.h"

namespace gpuclean::rewrite {

GraphEdit::GraphEdit(ir::Model& model, const std::string& pass_id)
    : model_(model),
      prefix_(pass_id + "/"),
      builder_(builder::GraphBuilder::Extend(std::move(model.main()), pass_id + "/")) {}

GraphEdit::~GraphEdit() {
  // A pass that threw mid-edit still hands the graph back so the caller's
  // model is whole (Fix() discards it anyway).
  if (!committed_) model_.main() = builder_.Release();
}

void GraphEdit::Replace(int node, std::vector<int> replacements) {
  const ir::Op& op = graph().ops.at(node);
  if (replacements.size() != op.outputs.size())
    ThrowInternal(fmt::format("{}: op {} ({}) has {} outputs, {} replacements", prefix_, node, op.name(),
                              op.outputs.size(), replacements.size()));
  replaced_.emplace_back(node, std::move(replacements));
}

void GraphEdit::Remove(int node) { removed_.push_back(node); }

int GraphEdit::ConstF32(const std::string& name, std::vector<int32_t> shape, const std::vector<float>& values) {
  return builder_.ConstF32(prefix_ + name, std::move(shape), values);
}

int GraphEdit::SharedScalarF32(const std::string& name, float value) {
  auto [it, inserted] = shared_scalars_.try_emplace(name, -1);
  if (inserted) it->second = ConstF32(name, {}, {value});
  return it->second;
}

int GraphEdit::Input(const std::string& name, ir::DType dtype, std::vector<int32_t> shape) {
  inputs_added_ = true;
  const int t = builder_.Input(prefix_ + name, dtype, std::move(shape));
  for (ir::SignatureDef& sig : model_.signatures)
    if (sig.subgraph == 0) sig.inputs.push_back({prefix_ + name, t});
  return t;
}

std::pair<int, HostInput> GraphEdit::ScalarHostInput(const std::string& name, float value) {
  const int t = Input(name, tfl::TensorType_FLOAT32, {1});
  npy::Array array{tfl::TensorType_FLOAT32, {1}, std::vector<uint8_t>(sizeof value)};
  std::memcpy(array.data.data(), &value, sizeof value);
  return {t, HostInput{prefix_ + name, std::move(array)}};
}

namespace {

// Ops with effects beyond their outputs are never dropped as dead.
bool HasSideEffects(const ir::Op& op) {
  switch (op.code) {
    case tfl::BuiltinOperator_VAR_HANDLE:
    case tfl::BuiltinOperator_ASSIGN_VARIABLE:
    case tfl::BuiltinOperator_READ_VARIABLE:
    case tfl::BuiltinOperator_CALL_ONCE:
    case tfl::BuiltinOperator_CUSTOM: return true;
    default: return !op.mutating_variable_inputs.empty();
  }
}

void RemoveDeadOps(ir::Subgraph& g) {
  for (bool changed = true; changed;) {
    changed = false;
    const auto consumers = g.Consumers();
    for (int i = static_cast<int>(g.ops.size()) - 1; i >= 0; --i) {
      const ir::Op& op = g.ops[i];
      if (HasSideEffects(op)) continue;
      const bool dead = std::all_of(op.outputs.begin(), op.outputs.end(),
                                    [&](int t) { return t < 0 || (consumers[t].empty() && !g.IsGraphOutput(t)); });
      if (dead) {
        g.RemoveOp(i);
        changed = true;
        break;  // consumers are stale now
      }
    }
  }
}

}  // namespace

namespace {

// Subgraph::RewireConsumers checks the graph's invariants after it, and in
// the middle of Commit() the replaced ops' outputs are detached (-1) until
// the ops are dropped: the whole result is validated at the end instead.
void RewireMidEdit(ir::Subgraph& g, int from, int to) {
  for (ir::Op& op : g.ops)
    for (int32_t& in : op.inputs)
      if (in == from) in = to;
  for (int32_t& out : g.outputs)
    if (out == from) out = to;
}

}  // namespace

void GraphEdit::Commit() {
  ir::Subgraph g = builder_.Release();
  committed_ = true;
  if (replaced_.empty() && removed_.empty() && !inputs_added_) {
    model_.main() = std::move(g);
    return;
  }
  std::set<int> drop(removed_.begin(), removed_.end());
  for (const auto& [node, replacements] : replaced_) {
    drop.insert(node);
    const std::vector<int32_t> outputs = g.ops[node].outputs;
    for (size_t k = 0; k < outputs.size(); ++k) {
      const int old_tensor = outputs[k], rep = replacements[k];
      if (old_tensor < 0 || rep == old_tensor) continue;
      const ir::Tensor &o = g.tensors.at(old_tensor), &r = g.tensors.at(rep);
      if (o.dtype != r.dtype || o.shape != r.shape)
        ThrowInternal(fmt::format("{}: replacement {} {} {} does not match {} {} {}", prefix_, r.name,
                                  ir::DTypeName(r.dtype), ir::FormatShape(r.shape), o.name, ir::DTypeName(o.dtype),
                                  ir::FormatShape(o.shape)));
      const int producer = g.Producer(rep);
      const bool movable = producer >= 0 && !drop.count(producer) && !g.IsGraphOutput(rep) && !g.IsGraphInput(rep);
      // Detach the old op's output first so the tensor keeps one producer.
      g.ops[node].outputs[k] = -1;
      if (movable) {
        // The replacement's producer writes the old tensor: its name, graph
        // output slot and signature entry stay as they were.
        for (int32_t& out : g.ops[producer].outputs)
          if (out == rep) out = old_tensor;
        RewireMidEdit(g, rep, old_tensor);
      } else {
        RewireMidEdit(g, old_tensor, rep);
      }
    }
  }
  // The dropped ops' detached (-1) outputs are invalid only until they go.
  for (auto it = drop.rbegin(); it != drop.rend(); ++it) g.ops.erase(g.ops.begin() + *it);
  RemoveDeadOps(g);
  g.SortOps();
  model_.main() = std::move(g);
  model_.RemoveDeadTensors(0);
  try {
    model_.Validate();
  } catch (const Error& e) {
    ThrowInternal(fmt::format("{}: the rewritten graph is invalid: {}", prefix_, e.what()));
  }
}

bool HasNoFusedActivation(const ir::Op& op) {
  tfl::ActivationFunctionType act = tfl::ActivationFunctionType_NONE;
  if (const auto* o = op.options.AsAddOptions()) act = o->fused_activation_function;
  if (const auto* o = op.options.AsSubOptions()) act = o->fused_activation_function;
  if (const auto* o = op.options.AsMulOptions()) act = o->fused_activation_function;
  if (const auto* o = op.options.AsDivOptions()) act = o->fused_activation_function;
  return act == tfl::ActivationFunctionType_NONE;
}

const ir::Op* ProducerWithoutActivation(const ir::Subgraph& graph, int tensor, tfl::BuiltinOperator code) {
  if (tensor < 0) return nullptr;
  const int p = graph.Producer(tensor);
  if (p < 0 || graph.ops[p].code != code || graph.ops[p].outputs.size() != 1 || !HasNoFusedActivation(graph.ops[p]))
    return nullptr;
  return &graph.ops[p];
}

int SoleConsumer(const ir::Subgraph& graph, int tensor) {
  if (graph.IsGraphOutput(tensor)) return -1;
  int found = -1;
  for (size_t i = 0; i < graph.ops.size(); ++i)
    for (int in : graph.ops[i].inputs)
      if (in == tensor) {
        if (found >= 0 && found != static_cast<int>(i)) return -1;
        found = static_cast<int>(i);
      }
  return found;
}

std::vector<float> ConstFloats(const ir::Subgraph& graph, int tensor) {
  if (tensor < 0) return {};
  const ir::Tensor& t = graph.tensors.at(tensor);
  if (!t.is_const() || t.sparsity || !t.quant.empty()) return {};
  std::vector<float> out;
  if (t.dtype == tfl::TensorType_FLOAT32) {
    out.resize(t.data->size() / 4);
    std::memcpy(out.data(), t.data->data(), out.size() * 4);
  } else if (t.dtype == tfl::TensorType_FLOAT16) {
    for (uint16_t h : t.data->as<uint16_t>()) out.push_back(HalfToFloat(h));
  }
  return out;
}

std::vector<int64_t> ConstInts(const ir::Subgraph& graph, int tensor) {
  if (tensor < 0) return {};
  const ir::Tensor& t = graph.tensors.at(tensor);
  if (!t.is_const()) return {};
  std::vector<int64_t> out;
  if (t.dtype == tfl::TensorType_INT32)
    for (int32_t v : t.data->as<int32_t>()) out.push_back(v);
  else if (t.dtype == tfl::TensorType_INT64)
    for (int64_t v : t.data->as<int64_t>()) out.push_back(v);
  return out;
}

std::optional<float> ConstScalar(const ir::Subgraph& graph, int tensor) {
  const std::vector<float> v = ConstFloats(graph, tensor);
  if (v.size() != 1) return std::nullopt;
  return v[0];
}

namespace {

enum class Constness : uint8_t { kUnknown, kVisiting, kConstant, kRuntime };

// Resolves `root` and what it depends on into `state`, each tensor once:
// a graph thousands of ops deep asked about every tensor (const-fold) would
// otherwise walk the same producers again for each.
bool ResolveConstness(const ir::Subgraph& graph, const std::vector<int>& producer, std::vector<Constness>& state,
                      int root) {
  std::vector<int> stack = {root};
  while (!stack.empty()) {
    const int t = stack.back();
    Constness& s = state[static_cast<size_t>(t)];
    if (s == Constness::kConstant || s == Constness::kRuntime) {
      stack.pop_back();
      continue;
    }
    const int p = producer[static_cast<size_t>(t)];
    if (graph.tensors[t].is_const() || p < 0 || HasSideEffects(graph.ops[p])) {
      s = graph.tensors[t].is_const() ? Constness::kConstant : Constness::kRuntime;
      stack.pop_back();
      continue;
    }
    if (s == Constness::kUnknown) {  // its inputs first
      s = Constness::kVisiting;
      for (int in : graph.ops[p].inputs)
        if (in >= 0 && state[static_cast<size_t>(in)] == Constness::kUnknown) stack.push_back(in);
      continue;
    }
    // Inputs resolved (one still visiting would be a cycle: not constant).
    const std::vector<int32_t>& inputs = graph.ops[p].inputs;
    s = std::all_of(inputs.begin(), inputs.end(),
                    [&](int in) { return in < 0 || state[static_cast<size_t>(in)] == Constness::kConstant; })
            ? Constness::kConstant
            : Constness::kRuntime;
    stack.pop_back();
  }
  return state[static_cast<size_t>(root)] == Constness::kConstant;
}

}  // namespace

bool IsConstantValued(const ir::Subgraph& graph, int tensor) {
  if (tensor < 0) return false;
  if (graph.tensors.at(tensor).is_const()) return true;
  std::vector<Constness> state(graph.tensors.size(), Constness::kUnknown);
  return ResolveConstness(graph, graph.Producers(), state, tensor);
}

std::vector<bool> ConstantValuedTensors(const ir::Subgraph& graph) {
  const std::vector<int> producer = graph.Producers();
  std::vector<Constness> state(graph.tensors.size(), Constness::kUnknown);
  std::vector<bool> constant(graph.tensors.size());
  for (size_t t = 0; t < constant.size(); ++t)
    constant[t] = ResolveConstness(graph, producer, state, static_cast<int>(t));
  return constant;
}

npy::Array EvaluateConstant(const ir::Subgraph& graph, int tensor) {
  if (!IsConstantValued(graph, tensor))
    ThrowUnsupported(fmt::format("tensor '{}' is not computed from constants only", graph.tensors.at(tensor).name));
  auto model = std::make_shared<ir::Model>();
  ir::Subgraph& g = model->subgraphs.emplace_back();
  g.tensors = graph.tensors;
  std::set<int> needed;
  std::vector<int> stack = {tensor};
  while (!stack.empty()) {
    const int t = stack.back();
    stack.pop_back();
    const int p = graph.Producer(t);
    if (p < 0 || !needed.insert(p).second) continue;
    for (int in : graph.ops[p].inputs)
      if (in >= 0) stack.push_back(in);
  }
  for (int p : needed) g.ops.push_back(graph.ops[p]);
  g.SortOps();
  if (g.ops.empty()) {
    // A stored constant: copy it out (densify first if it is sparse).
    const ir::Tensor& t = graph.tensors[tensor];
    if (t.sparsity) ThrowUnsupported(fmt::format("tensor '{}' is sparse", t.name));
    npy::Array a;
    a.dtype = t.dtype;
    a.shape.assign(t.shape.begin(), t.shape.end());
    a.data.assign(t.data->data(), t.data->data() + t.data->size());
    return a;
  }
  g.outputs = {tensor};
  model->RemoveDeadTensors(0);
  exec::Interpreter interpreter(model);
  interpreter.Invoke();
  return interpreter.Output(0);
}

}  // namespace gpuclean::rewrite
