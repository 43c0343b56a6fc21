// Control flow with a static answer, lowered in place:
//   If with a condition known at convert time (a pinned input, shape
//     arithmetic) -> the chosen branch's nodes, inline;
//   If with a run-time condition and branches of one static shape -> both
//     branches, then a Where per output;
//   Loop with a trip count known at convert time -> its body unrolled, each
//     iteration's names made its own, scan outputs stacked (at most
//     kMaxUnrolledIterations).
// Anything else is one clear refusal: a graph with data-dependent control
// flow has no single static TFLite graph.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <memory>

#include "onnx/ops/ops.h"

namespace gpuclean::onnx::ops {
namespace {

constexpr int64_t kMaxUnrolledIterations = 1024;

bool Truthy(const npy::Array& a) {
  if (a.num_elements() != 1) return false;
  switch (a.dtype) {
    case tfl::TensorType_BOOL:
    case tfl::TensorType_UINT8: return a.as<uint8_t>()[0] != 0;
    case tfl::TensorType_INT32: return a.as<int32_t>()[0] != 0;
    case tfl::TensorType_INT64: return a.as<int64_t>()[0] != 0;
    case tfl::TensorType_FLOAT32: return a.as<float>()[0] != 0;
    default: return false;
  }
}

Node MadeUp(const std::string& op, std::vector<std::string> inputs, std::vector<std::string> outputs,
            const Node& from) {
  Node n;
  n.index = from.index;
  n.name = from.name;
  n.op_type = op;
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  return n;
}

void If(NodeContext& ctx) {
  const Node& node = ctx.node();
  const Graph& then_g = ctx.Subgraph("then_branch");
  const Graph& else_g = ctx.Subgraph("else_branch");
  if (then_g.outputs.size() != static_cast<size_t>(ctx.num_outputs()) || else_g.outputs.size() != then_g.outputs.size())
    ctx.BadModel("its branches do not give one value per output");
  if (ctx.IsConst(0)) {
    if (ctx.Const(0).num_elements() != 1) ctx.BadModel("the condition is not a single value");
    const Graph& taken = Truthy(ctx.Const(0)) ? then_g : else_g;
    ctx.LowerSubgraph(taken);
    for (int k = 0; k < ctx.num_outputs(); ++k)
      if (ctx.HasOutput(k)) ctx.LowerNode(MadeUp("Identity", {taken.outputs[k].name}, {node.outputs[k]}, node));
    return;
  }
  // Both branches run; each output is selected. Branch values are copied
  // under names of their own first: sibling branches may reuse names.
  auto lower_branch = [&](const Graph& g, const char* tag) {
    ctx.LowerSubgraph(g);
    std::vector<std::string> names;
    for (int k = 0; k < ctx.num_outputs(); ++k) {
      names.push_back(fmt::format("{}/{}", node.outputs[k], tag));
      ctx.LowerNode(MadeUp("Identity", {g.outputs[k].name}, {names.back()}, node));
    }
    return names;
  };
  const std::vector<std::string> then_out = lower_branch(then_g, "then");
  const std::vector<std::string> else_out = lower_branch(else_g, "else");
  for (int k = 0; k < ctx.num_outputs(); ++k) {
    const Dims& a = ctx.ValueOf(then_out[k]).shape;
    const Dims& b = ctx.ValueOf(else_out[k]).shape;
    const bool padded = ctx.ValueOf(then_out[k]).rows || ctx.ValueOf(else_out[k]).rows;
    if (a != b && !padded)
      ctx.Fail(
          fmt::format("the condition is computed at run time and output {} has shape [{}] in one branch and [{}] "
                      "in the other; pin the inputs it depends on with --input-value",
                      k, fmt::join(a, ","), fmt::join(b, ",")));
    ctx.LowerNode(MadeUp("Where", {node.inputs[0], then_out[k], else_out[k]}, {node.outputs[k]}, node));
  }
}

// A copy of `g` whose own names (inputs, initializers, node outputs, and
// the reads of them, nested graphs included) carry `suffix`: one loop
// iteration's values never meet another's.
void RenameReads(Graph& g, const std::map<std::string, std::string>& renamed) {
  for (Node& n : g.nodes) {
    for (std::string& in : n.inputs)
      if (auto it = renamed.find(in); it != renamed.end()) in = it->second;
    for (auto& [_, a] : n.attributes)
      if (a.graph) {
        auto inner = std::make_shared<Graph>(*a.graph);
        RenameReads(*inner, renamed);
        a.graph = std::move(inner);
      }
  }
}

Graph Iteration(const Graph& body, const std::string& suffix) {
  std::map<std::string, std::string> renamed;
  const auto own = [&](const std::string& name) {
    if (!name.empty()) renamed.emplace(name, name + suffix);
  };
  for (const ValueInfo& v : body.inputs) own(v.name);
  for (const auto& [name, _] : body.initializers) own(name);
  for (const Node& n : body.nodes)
    for (const std::string& out : n.outputs) own(out);
  Graph g = body;
  g.initializers.clear();
  for (const auto& [name, value] : body.initializers) g.initializers[renamed.at(name)] = value;
  for (ValueInfo& v : g.inputs) v.name = renamed.at(v.name);
  for (ValueInfo& v : g.outputs)
    if (auto it = renamed.find(v.name); it != renamed.end()) v.name = it->second;
  for (Node& n : g.nodes)
    for (std::string& out : n.outputs)
      if (!out.empty()) out = renamed.at(out);
  RenameReads(g, renamed);
  return g;
}

npy::Array Int64Scalar(int64_t v) {
  npy::Array a;
  a.dtype = tfl::TensorType_INT64;
  a.data.resize(8);
  *a.as<int64_t>() = v;
  return a;
}

// Loop with a trip count known at convert time: the body unrolled. Each
// iteration's carried values feed the next; scan outputs are stacked on a
// new first axis. A condition the body computes must be known at convert
// time too (it may end the loop early).
void Loop(NodeContext& ctx) {
  const Node& node = ctx.node();
  const Graph& body = ctx.Subgraph("body");
  if (!ctx.Has(0) || !ctx.IsConst(0))
    ctx.Fail("the trip count is not known at convert time; pin what it depends on with --input-value");
  const int64_t trips = ctx.ConstInts(0).at(0);
  if (trips > kMaxUnrolledIterations)
    ctx.Fail(fmt::format("{} iterations; at most {} are unrolled", trips, kMaxUnrolledIterations));
  const int carried = ctx.num_inputs() - 2;
  if (carried < 0 || body.inputs.size() != static_cast<size_t>(carried + 2) ||
      body.outputs.size() < static_cast<size_t>(carried + 1))
    ctx.BadModel("its body's inputs and outputs do not match the loop's");
  const int scans = static_cast<int>(body.outputs.size()) - 1 - carried;
  if (ctx.Has(1) && !ctx.IsConst(1)) ctx.Fail("the loop condition is computed at run time");
  bool go = !ctx.Has(1) || Truthy(ctx.Const(1));
  std::vector<std::string> current(node.inputs.begin() + 2, node.inputs.end());
  std::vector<std::vector<std::string>> scanned(scans);
  for (int64_t i = 0; i < trips && go; ++i) {
    const Graph it = Iteration(body, fmt::format("/iter{}", i));
    Node iteration = MadeUp("Constant", {}, {it.inputs[0].name}, node);
    iteration.attributes["value"].kind = Attribute::kTensor;
    iteration.attributes["value"].tensor = Int64Scalar(i);
    ctx.LowerNode(iteration);
    if (!it.inputs[1].name.empty()) {
      Node cond = MadeUp("Constant", {}, {it.inputs[1].name}, node);
      npy::Array truth;
      truth.dtype = tfl::TensorType_BOOL;
      truth.data = {1};
      cond.attributes["value"].kind = Attribute::kTensor;
      cond.attributes["value"].tensor = truth;
      ctx.LowerNode(cond);
    }
    for (int j = 0; j < carried; ++j) ctx.LowerNode(MadeUp("Identity", {current[j]}, {it.inputs[2 + j].name}, node));
    ctx.LowerSubgraph(it);
    const Value& cond_out = ctx.ValueOf(it.outputs[0].name);
    if (!cond_out.constant) ctx.Fail("the loop condition is computed at run time");
    go = Truthy(*cond_out.constant);
    for (int j = 0; j < carried; ++j) current[j] = it.outputs[1 + j].name;
    for (int k = 0; k < scans; ++k) scanned[k].push_back(it.outputs[1 + carried + k].name);
  }
  for (int j = 0; j < carried; ++j)
    if (ctx.HasOutput(j)) ctx.LowerNode(MadeUp("Identity", {current[j]}, {node.outputs[j]}, node));
  for (int k = 0; k < scans; ++k) {
    if (!ctx.HasOutput(carried + k)) continue;
    if (scanned[k].empty()) ctx.Fail("a scan output of zero iterations is empty; empty tensors are not supported");
    std::vector<std::string> rows;
    for (const std::string& name : scanned[k]) {
      rows.push_back(name + "/row");
      Node unsqueeze = MadeUp("Unsqueeze", {name, name + "/axis0"}, {rows.back()}, node);
      Node axis = MadeUp("Constant", {}, {name + "/axis0"}, node);
      axis.attributes["value"].kind = Attribute::kTensor;
      npy::Array zero = Int64Scalar(0);
      zero.shape = {1};
      axis.attributes["value"].tensor = zero;
      ctx.LowerNode(axis);
      ctx.LowerNode(unsqueeze);
    }
    Node concat = MadeUp("Concat", rows, {node.outputs[carried + k]}, node);
    concat.attributes["axis"].kind = Attribute::kInt;
    concat.attributes["axis"].i = 0;
    ctx.LowerNode(concat);
  }
}

}  // namespace

void RegisterControlFlow(Registry& r) {
  r.Add("If", If);
  r.Add("Loop", Loop);
}

}  // namespace gpuclean::onnx::ops
