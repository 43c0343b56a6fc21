// `split --host` and `convert --host-ops auto`: GPU graph stages alternating
// with islands (CPU graphs, or host steps). Each runtime op gets a stage:
// GPU ops the even stages, island ops the odd ones, every op the earliest
// stage of its kind after everything it reads - so ops that do not depend
// on an island stay in the GPU graph before it.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gpuclean/exec.h"
#include "gpuclean/format.h"
#include "gpuclean/io.h"
#include "gpuclean/lint.h"
#include "gpuclean/op_table.h"
#include "gpuclean/split.h"
#include "split/split_internal.h"

namespace gpuclean::split {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

const ir::Tensor* Input(const ir::Subgraph& g, const ir::Op& op, size_t k) {
  return k < op.inputs.size() && op.inputs[k] >= 0 ? &g.tensors[op.inputs[k]] : nullptr;
}

std::optional<int64_t> ScalarInt(const ir::Tensor* t) {
  if (!t || !t->is_const() || t->shape.size() > 1 || (t->shape.size() == 1 && t->shape[0] != 1)) return std::nullopt;
  if (t->dtype == tfl::TensorType_INT32 && t->data->size() >= 4)
    return reinterpret_cast<const int32_t*>(t->data->data())[0];
  if (t->dtype == tfl::TensorType_INT64 && t->data->size() >= 8)
    return reinterpret_cast<const int64_t*>(t->data->data())[0];
  return std::nullopt;
}

std::optional<float> ScalarFloat(const ir::Tensor* t) {
  if (!t || !t->is_const() || t->dtype != tfl::TensorType_FLOAT32 || t->data->size() != 4) return std::nullopt;
  return reinterpret_cast<const float*>(t->data->data())[0];
}

// Values are named after their tensors; a name two tensors share gets the
// tensor index appended so the wiring stays unambiguous.
std::vector<std::string> ValueNames(const ir::Subgraph& g) {
  std::map<std::string, int> count;
  for (const ir::Tensor& t : g.tensors) ++count[t.name];
  std::vector<std::string> names;
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    const std::string& n = g.tensors[t].name;
    names.push_back(n.empty() || count[n] > 1 ? fmt::format("{}#{}", n.empty() ? "tensor" : n, t) : n);
  }
  return names;
}

npy::Array ConstantValue(const ir::Tensor& t) {
  npy::Array a;
  a.dtype = t.dtype;
  a.shape.assign(t.shape.begin(), t.shape.end());
  a.data.assign(t.data->data(), t.data->data() + t.data->size());
  return a;
}

}  // namespace

std::optional<HostStep> HostStepFor(const ir::Subgraph& g, int index, std::string* why_not) {
  const ir::Op& op = g.ops[index];
  auto no = [&](std::string why) -> std::optional<HostStep> {
    if (why_not) *why_not = std::move(why);
    return std::nullopt;
  };
  auto unfused = [&](tfl::ActivationFunctionType act) { return act == tfl::ActivationFunctionType_NONE; };
  HostStep h;
  h.inputs.assign(op.inputs.begin(), op.inputs.end());
  h.outputs.assign(op.outputs.begin(), op.outputs.end());
  switch (op.code) {
    case tfl::BuiltinOperator_TOPK_V2: {
      const auto k = ScalarInt(Input(g, op, 1));
      if (!k) return no("its k is not a constant");
      if (op.outputs.size() != 2 || g.tensors[op.outputs[1]].dtype != tfl::TensorType_INT32)
        return no("its indices are not int32");
      h.step = "topk";
      h.params = {{"k", *k}};
      h.inputs = {op.inputs[0]};
      return h;
    }
    case tfl::BuiltinOperator_GATHER: {
      const auto* o = op.options.AsGatherOptions();
      h.step = "gather";
      h.params = {{"axis", o ? o->axis : 0}, {"batch_dims", o ? o->batch_dims : 0}};
      return h;
    }
    case tfl::BuiltinOperator_GATHER_ND: h.step = "gather_nd"; return h;
    case tfl::BuiltinOperator_ADD:
    case tfl::BuiltinOperator_SUB:
    case tfl::BuiltinOperator_MUL:
    case tfl::BuiltinOperator_DIV: {
      tfl::ActivationFunctionType act = tfl::ActivationFunctionType_NONE;
      if (const auto* o = op.options.AsAddOptions()) act = o->fused_activation_function;
      if (const auto* o = op.options.AsSubOptions()) act = o->fused_activation_function;
      if (const auto* o = op.options.AsMulOptions()) act = o->fused_activation_function;
      if (const auto* o = op.options.AsDivOptions()) act = o->fused_activation_function;
      if (!unfused(act)) return no("it has a fused activation");
      static const std::map<tfl::BuiltinOperator, const char*> names = {{tfl::BuiltinOperator_ADD, "add"},
                                                                        {tfl::BuiltinOperator_SUB, "sub"},
                                                                        {tfl::BuiltinOperator_MUL, "mul"},
                                                                        {tfl::BuiltinOperator_DIV, "div"}};
      h.step = names.at(op.code);
      return h;
    }
    case tfl::BuiltinOperator_MAXIMUM: h.step = "maximum"; return h;
    case tfl::BuiltinOperator_MINIMUM: h.step = "minimum"; return h;
    case tfl::BuiltinOperator_LOGISTIC: h.step = "sigmoid"; return h;
    case tfl::BuiltinOperator_EXP: h.step = "exp"; return h;
    case tfl::BuiltinOperator_LOG: h.step = "log"; return h;
    case tfl::BuiltinOperator_RELU: h.step = "relu"; return h;
    case tfl::BuiltinOperator_TANH: h.step = "tanh"; return h;
    case tfl::BuiltinOperator_NEG: h.step = "neg"; return h;
    case tfl::BuiltinOperator_ABS: h.step = "abs"; return h;
    case tfl::BuiltinOperator_SQRT: h.step = "sqrt"; return h;
    case tfl::BuiltinOperator_RESHAPE: {
      const ir::Tensor& out = g.tensors[op.outputs[0]];
      h.step = "reshape";
      h.params = {{"shape", std::vector<int64_t>(out.shape.begin(), out.shape.end())}};
      h.inputs = {op.inputs[0]};
      return h;
    }
    case tfl::BuiltinOperator_CONCATENATION: {
      const auto* o = op.options.AsConcatenationOptions();
      if (o && !unfused(o->fused_activation_function)) return no("it has a fused activation");
      h.step = "concat";
      h.params = {{"axis", o ? o->axis : 0}};
      return h;
    }
    case tfl::BuiltinOperator_GREATER:
      if (const auto t = ScalarFloat(Input(g, op, 1))) {
        h.step = "threshold";
        h.params = {{"threshold", *t}};
        h.inputs = {op.inputs[0]};
        return h;
      }
      [[fallthrough]];
    case tfl::BuiltinOperator_LESS:
    case tfl::BuiltinOperator_LESS_EQUAL:
    case tfl::BuiltinOperator_GREATER_EQUAL:
    case tfl::BuiltinOperator_EQUAL:
    case tfl::BuiltinOperator_NOT_EQUAL: {
      const ir::DType dtype = g.tensors[op.inputs[0]].dtype;
      if (dtype != tfl::TensorType_FLOAT32 && dtype != tfl::TensorType_INT32)
        return no(fmt::format("it compares {} (the host step compares float32 or int32)", ir::DTypeName(dtype)));
      h.step = op.name();
      for (char& c : h.step) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return h;
    }
    case tfl::BuiltinOperator_SELECT: {
      // SELECT (v1) picks whole rows by a rank-1 condition; the host step
      // broadcasts numpy's way, which agrees only on equal shapes.
      const ir::Tensor& condition = g.tensors[op.inputs[0]];
      if (condition.shape != g.tensors[op.inputs[1]].shape || condition.shape != g.tensors[op.inputs[2]].shape)
        return no("its condition selects rows (SELECT of unequal shapes)");
      h.step = "select";
      return h;
    }
    case tfl::BuiltinOperator_SELECT_V2: h.step = "select"; return h;
    case tfl::BuiltinOperator_CAST: {
      const ir::DType from = g.tensors[op.inputs[0]].dtype, to = g.tensors[op.outputs[0]].dtype;
      const auto castable = [](ir::DType d) {
        return d == tfl::TensorType_FLOAT32 || d == tfl::TensorType_INT32 || d == tfl::TensorType_INT64 ||
               d == tfl::TensorType_UINT8 || d == tfl::TensorType_BOOL;
      };
      if (!castable(from) || !castable(to))
        return no(fmt::format("it casts {} to {}", ir::DTypeName(from), ir::DTypeName(to)));
      h.step = "cast";
      h.params = {{"to", std::string(ir::DTypeName(to))}};
      return h;
    }
    case tfl::BuiltinOperator_TILE: {
      const ir::Tensor* multiples = Input(g, op, 1);
      if (!multiples || !multiples->is_const() || multiples->dtype != tfl::TensorType_INT32)
        return no("its multiples are not an int32 constant");
      const auto* m = reinterpret_cast<const int32_t*>(multiples->data->data());
      h.step = "tile";
      h.params = {{"multiples", std::vector<int64_t>(m, m + multiples->data->size() / 4)}};
      h.inputs = {op.inputs[0]};
      return h;
    }
    case tfl::BuiltinOperator_SQUEEZE:
    case tfl::BuiltinOperator_EXPAND_DIMS: {
      const ir::Tensor& out = g.tensors[op.outputs[0]];
      h.step = "reshape";
      h.params = {{"shape", std::vector<int64_t>(out.shape.begin(), out.shape.end())}};
      h.inputs = {op.inputs[0]};
      return h;
    }
    default: return no("no host step computes " + op.name() + " (gpuclean pipeline steps lists them)");
  }
}

std::vector<int> OpsOfTypes(const ir::Subgraph& g, const std::vector<std::string>& types) {
  std::set<std::string> wanted;
  for (const std::string& t : types) {
    bool known = false;
    for (int c = tfl::BuiltinOperator_MIN; c <= tfl::BuiltinOperator_MAX && !known; ++c)
      known = t == tfl::EnumNameBuiltinOperator(static_cast<tfl::BuiltinOperator>(c));
    if (!known) throw Error(ErrorKind::kUsage, fmt::format("--host {}: no TFLite op has that name (e.g. TOPK_V2)", t));
    wanted.insert(t);
  }
  std::vector<int> ops;
  for (size_t i = 0; i < g.ops.size(); ++i)
    if (wanted.count(g.ops[i].name())) ops.push_back(static_cast<int>(i));
  return ops;
}

const char* IslandsName(Islands islands) { return islands == Islands::kCpuGraphs ? "cpu" : "steps"; }

Islands ParseIslands(const std::string& name) {
  if (name == "cpu") return Islands::kCpuGraphs;
  if (name == "steps") return Islands::kHostSteps;
  throw Error(ErrorKind::kUsage, fmt::format("--islands {}: expected cpu (CPU graphs) or steps (host steps)", name));
}

bool IslandCanHold(const ir::Subgraph& g, int op, Islands islands, std::string* why_not) {
  if (islands == Islands::kCpuGraphs) return exec::RunsAsCpuGraphOp(g, op, why_not);
  return HostStepFor(g, op, why_not).has_value();
}

std::vector<int> HostOpsForTarget(const ir::Model& model, const std::string& target, Islands islands,
                                  std::vector<std::string>* stays) {
  const std::string dir = (fs::path(lint::DefaultDataDir()) / "compat").string();
  const lint::Report report = lint::Lint(model, lint::LoadMatrix(dir, target));
  const ir::Subgraph& g = model.main();
  std::vector<int> ops;
  for (size_t i = 0; i < g.ops.size() && !report.node_status.empty() && i < report.node_status[0].size(); ++i) {
    // Islands are exact: they take what the GPU declines, what it computes
    // wrongly, and what the matrix has no entry for (residency already
    // counts it off the GPU: NON_MAX_SUPPRESSION_V4, which no GPU kernel
    // computes).
    const lint::Status status = report.node_status[0][i];
    if (status != lint::Status::kRejected && status != lint::Status::kFallback && status != lint::Status::kIncorrect &&
        status != lint::Status::kUnknown)
      continue;
    std::string why;
    if (IslandCanHold(g, static_cast<int>(i), islands, &why))
      ops.push_back(static_cast<int>(i));
    else if (stays)
      stays->push_back(fmt::format("op {} ({}) is {} on the GPU for {} but stays in the graph: {}", i, g.ops[i].name(),
                                   lint::StatusName(status), target, why));
  }
  return ops;
}

namespace {

bool IsIndexLike(ir::DType dtype) {
  return dtype == tfl::TensorType_INT32 || dtype == tfl::TensorType_INT64 || dtype == tfl::TensorType_BOOL ||
         dtype == tfl::TensorType_INT16 || dtype == tfl::TensorType_INT8 || dtype == tfl::TensorType_UINT8;
}

}  // namespace

std::vector<int> GrowHostIslands(const ir::Subgraph& g, const std::vector<int>& host_ops, Islands islands) {
  const std::vector<int> order = g.TopologicalOrder();
  const std::vector<bool> constant = internal::ConstantValued(g, order);
  std::vector<bool> host(g.ops.size(), false);
  for (int i : host_ops) host[i] = true;
  const std::vector<std::vector<int>> consumers = g.Consumers();
  std::vector<int> producer(g.tensors.size(), -1);
  for (size_t i = 0; i < g.ops.size(); ++i)
    for (int t : g.ops[i].outputs)
      if (t >= 0) producer[t] = static_cast<int>(i);
  // Backward: an index chain that only island ops read is computed there.
  if (islands == Islands::kCpuGraphs) {
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      const int i = *it;
      const ir::Op& op = g.ops[i];
      if (host[i] || op.outputs.empty() || !IslandCanHold(g, i, islands)) continue;
      bool joins = true, bool_to_island = false;
      for (int t : op.outputs) {
        if (t < 0) continue;
        if (constant[t] || !IsIndexLike(g.tensors[t].dtype) || g.IsGraphOutput(t) || consumers[t].empty()) {
          joins = false;
          break;
        }
        for (int c : consumers[t]) {
          joins = joins && host[c];
          // LiteRT.js's WebGPU delegate refuses a graph with a BOOL tensor
          // ("Element type BOOL is not supported", measured by
          // tests/onnx/convert_host_ops_test.cc), and the counts of padded
          // values (int32 scalars) are arithmetic a GPU graph only ships
          // back: a mask or an index an island reads is computed there.
          bool_to_island = bool_to_island || host[c];
        }
      }
      if (joins || bool_to_island) host[i] = true;
    }
  }
  // Ops with a path to an island op: only these can sit between two of them.
  std::vector<bool> feeds_host(g.ops.size(), false);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const int i = *it;
    for (int t : g.ops[i].outputs) {
      if (t < 0) continue;
      for (int c : consumers[t]) feeds_host[i] = feeds_host[i] || host[c] || feeds_host[c];
    }
  }
  // In dataflow order, so a chain of index ops joins in one sweep. A
  // convolution or matmul stays on the GPU even when it reads only island
  // values: sending its input over costs less than computing it on the CPU
  // (an image normalised on the CPU would otherwise pull the whole backbone
  // after it into the island).
  for (int i : order) {
    if (host[i] || !feeds_host[i] || !IslandCanHold(g, i, islands)) continue;
    if (ir::TraitsOf(g.ops[i].code).family == ir::OpFamily::kDotProduct) continue;
    const ir::Op& op = g.ops[i];
    bool from_host = false, only_host = true;
    for (int t : op.inputs) {
      if (t < 0 || g.tensors[t].is_const()) continue;
      if (constant[t] || producer[t] < 0 || !host[producer[t]]) only_host = false;
      from_host = true;
    }
    if (from_host && only_host) host[i] = true;
  }
  // After the last island: the ops that read only island values (or each
  // other's) and whose results reach only the graph's outputs end the
  // pipeline on the CPU, sparing a GPU graph that would only receive,
  // compute a little and send back. Found as the largest such set: start
  // from every candidate, drop what reads or feeds anything else, repeat.
  if (islands == Islands::kCpuGraphs) {
    std::vector<bool> tail(g.ops.size(), false);
    for (int i : order)
      tail[i] =
          !host[i] && IslandCanHold(g, i, islands) && ir::TraitsOf(g.ops[i].code).family != ir::OpFamily::kDotProduct;
    for (bool changed = true; changed;) {
      changed = false;
      for (int i : order) {
        if (!tail[i]) continue;
        bool keeps = true, from_host = false;
        for (int t : g.ops[i].inputs) {
          if (t < 0 || g.tensors[t].is_const() || constant[t]) continue;
          const int p = producer[t];
          if (p < 0 || !(host[p] || tail[p])) keeps = false;
          from_host = true;
        }
        for (int t : g.ops[i].outputs)
          if (t >= 0)
            for (int c : consumers[t]) keeps = keeps && (host[c] || tail[c]);
        if (!keeps || !from_host) tail[i] = false, changed = true;
      }
    }
    for (size_t i = 0; i < g.ops.size(); ++i)
      if (tail[i]) host[i] = true;
  }
  std::vector<int> out;
  for (size_t i = 0; i < g.ops.size(); ++i)
    if (host[i]) out.push_back(static_cast<int>(i));
  return out;
}

std::vector<int> SelectionScoreChains(const ir::Subgraph& g, const std::vector<int>& island, int max_ops) {
  std::set<int> in(island.begin(), island.end());
  const std::vector<std::vector<int>> consumers = g.Consumers();
  const std::vector<bool> constant = internal::ConstantValued(g, g.TopologicalOrder());
  std::vector<int> added;
  std::vector<int> stack;
  for (int i : island) {
    const ir::Op& op = g.ops[i];
    if (op.code == tfl::BuiltinOperator_TOPK_V2 || op.code == tfl::BuiltinOperator_ARG_MAX ||
        op.code == tfl::BuiltinOperator_ARG_MIN)
      if (!op.inputs.empty() && op.inputs[0] >= 0) stack.push_back(op.inputs[0]);
  }
  while (!stack.empty() && static_cast<int>(added.size()) < max_ops) {
    const int t = stack.back();
    stack.pop_back();
    if (t < 0 || constant[t] || g.IsGraphOutput(t)) continue;
    const int p = g.Producer(t);
    if (p < 0 || in.count(p) || !exec::RunsAsCpuGraphOp(g, p)) continue;
    bool only_island = true;
    for (int out : g.ops[p].outputs)
      if (out >= 0) {
        if (g.IsGraphOutput(out)) only_island = false;
        for (int c : consumers[out]) only_island = only_island && in.count(c) > 0;
      }
    if (!only_island) continue;
    in.insert(p);
    added.push_back(p);
    for (int x : g.ops[p].inputs)
      if (x >= 0 && g.tensors[x].dtype == tfl::TensorType_FLOAT32) stack.push_back(x);
  }
  return added;
}

HostCut CutHostIslands(const ir::Model& model, const std::vector<int>& requested_ops, const std::string& file_stem,
                       Islands islands) {
  const ir::Subgraph& g = model.main();
  if (requested_ops.empty())
    throw Error(ErrorKind::kUsage, "no op to move to the host (the model has none of the named ops)");
  const char* where = islands == Islands::kCpuGraphs ? "in a CPU graph" : "on the host";
  for (int i : requested_ops) {
    std::string why;
    if (!IslandCanHold(g, i, islands, &why))
      throw Error(ErrorKind::kUsage, fmt::format("op {} ({}) cannot run {}: {}", i, g.ops[i].name(), where, why));
  }
  const std::vector<int> host_ops = GrowHostIslands(g, requested_ops, islands);
  const std::vector<int> order = g.TopologicalOrder();
  const std::vector<bool> constant = internal::ConstantValued(g, order);
  const std::vector<std::string> names = ValueNames(g);

  std::map<int, HostStep> steps;
  std::set<int> island(host_ops.begin(), host_ops.end());
  if (islands == Islands::kHostSteps) {
    for (int i : host_ops) {
      std::string why;
      auto step = HostStepFor(g, i, &why);
      if (!step)
        throw Error(ErrorKind::kUsage, fmt::format("op {} ({}) cannot run on the host: {}", i, g.ops[i].name(), why));
      for (int t : step->inputs)
        if (t >= 0 && constant[t] && !g.tensors[t].is_const())
          throw Error(ErrorKind::kUsage,
                      fmt::format("op {} ({}) reads '{}', which op {} computes from constants; keep it in the graph", i,
                                  g.ops[i].name(), g.tensors[t].name, g.Producer(t)));
      steps.emplace(i, std::move(*step));
    }
  }

  // Stages: even = GPU graph, odd = island.
  std::vector<int> stage(g.ops.size(), -1), available(g.tensors.size(), 0);
  int last = 0;
  for (int i : order) {
    const ir::Op& op = g.ops[i];
    const bool host = island.count(i) > 0;
    if (!host && std::all_of(op.outputs.begin(), op.outputs.end(), [&](int t) { return t < 0 || constant[t]; }))
      continue;
    int s = 0;
    for (int in : op.inputs)
      if (in >= 0 && !constant[in]) s = std::max(s, available[in]);
    if ((s % 2 == 1) != host) ++s;
    stage[i] = s;
    last = std::max(last, s);
    for (int out : op.outputs)
      if (out >= 0) available[out] = s;
  }

  HostCut cut;
  cut.islands = islands;
  cut.host_ops = static_cast<int>(island.size());
  cut.joined_ops = static_cast<int>(host_ops.size() - std::set<int>(requested_ops.begin(), requested_ops.end()).size());
  pipeline::Spec& spec = cut.spec;
  spec.source = model.source;
  for (int32_t t : g.inputs) spec.inputs.push_back(names[t]);
  for (int32_t t : g.outputs) spec.outputs.push_back(names[t]);
  spec.valid_rows = internal::PaddedOutputsNamed(model, [&](int32_t t) { return names[t]; });
  std::set<int> constants_written;
  int graph_number = 0;
  auto add_graph = [&](int s, const char* placement) {
    ++graph_number;
    Part part = internal::MakePart(model, stage, constant, order, s,
                                   fmt::format("gpuclean split --host: graph {} ({}){}", graph_number, placement,
                                               model.source.empty() ? "" : " of " + model.source));
    pipeline::Stage st;
    st.name = fmt::format("graph{}", graph_number);
    st.graph = fmt::format("{}.graph{}.tflite", file_stem, graph_number);
    st.placement = placement;
    for (int t : part.input_tensors) st.inputs.push_back(names[t]);
    for (int t : part.output_tensors) st.outputs.push_back(names[t]);
    st.ops = part.ops;
    spec.stages.push_back(std::move(st));
    cut.graphs.emplace_back(spec.stages.back().graph, std::move(part.model));
  };
  for (int s = 0; s <= last; ++s) {
    if (std::find(stage.begin(), stage.end(), s) == stage.end()) continue;
    if (s % 2 == 0) {
      add_graph(s, "gpu");
      continue;
    }
    if (islands == Islands::kCpuGraphs) {
      add_graph(s, "cpu");
      ++cut.cpu_graphs;
      continue;
    }
    for (int i : order) {
      if (stage[i] != s) continue;
      const HostStep& h = steps.at(i);
      pipeline::Stage st;
      st.kind = pipeline::Stage::Kind::kHost;
      st.name = fmt::format("op{}_{}", i, h.step);
      st.host = h.step;
      st.params = h.params;
      for (int t : h.inputs) {
        st.inputs.push_back(names[t]);
        if (g.tensors[t].is_const() && constants_written.insert(t).second) {
          const std::string file = fmt::format("{}.const.{}.npy", file_stem, internal::FileSafe(names[t]));
          spec.constants.push_back({names[t], file});
          cut.constants.emplace_back(file, ConstantValue(g.tensors[t]));
        }
      }
      for (int t : h.outputs) st.outputs.push_back(names[t]);
      spec.stages.push_back(std::move(st));
    }
  }
  return cut;
}

std::string HostStepSummary(const HostCut& cut) {
  if (cut.islands == Islands::kCpuGraphs) {
    std::string s = fmt::format("{} op(s) in {} CPU graph(s)", cut.host_ops, cut.cpu_graphs);
    return cut.joined_ops == 0 ? s : fmt::format("{} ({} joined)", s, cut.joined_ops);
  }
  if (cut.joined_ops == 0) return fmt::format("{} host step(s)", cut.host_ops);
  return fmt::format("{} host step(s) ({} joined between them)", cut.host_ops, cut.joined_ops);
}

std::string DescribeHostCut(const pipeline::Spec& spec) {
  std::string out;
  for (const pipeline::Stage& s : spec.stages) {
    if (s.kind == pipeline::Stage::Kind::kGraph)
      out += fmt::format("  {} {} ({} ops)\n", s.placement == "cpu" ? "cpu  " : "graph", s.graph, s.ops);
    else
      out += fmt::format("  host  {}{}\n", s.host, s.params.is_null() ? "" : " " + s.params.dump());
    out += fmt::format("        in  {}\n        out {}\n", fmt::join(s.inputs, ", "), fmt::join(s.outputs, ", "));
  }
  return out;
}

std::string WriteHostCut(HostCut& cut, const std::string& prefix) {
  const fs::path dir = fs::path(prefix).parent_path();
  for (auto& [file, model] : cut.graphs) {
    for (const pipeline::Stage& stage : cut.spec.stages)
      if (stage.graph == file) model.NameSignature(stage.inputs, stage.outputs);
    format::WriteModel(model, (dir / file).string());
  }
  for (const auto& [file, value] : cut.constants) npy::Write((dir / file).string(), value);
  cut.spec.path = prefix + ".pipeline.json";
  // The spec describes each graph's tensors from the graphs written.
  cut.spec.models.assign(cut.spec.stages.size(), nullptr);
  for (size_t s = 0; s < cut.spec.stages.size(); ++s)
    for (const auto& [file, model] : cut.graphs)
      if (cut.spec.stages[s].graph == file) cut.spec.models[s] = std::make_shared<const ir::Model>(model);
  pipeline::WriteSpec(cut.spec, cut.spec.path);
  return cut.spec.path;
}

}  // namespace gpuclean::split
