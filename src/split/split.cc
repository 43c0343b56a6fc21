#include "gpuclean/split.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <memory>
#include <set>

#include "gpuclean/error.h"
#include "gpuclean/exec.h"
#include "gpuclean/format.h"
#include "gpuclean/io.h"
#include "gpuclean/pipeline.h"
#include "gpuclean/shapes.h"
#include "split/split_internal.h"

namespace gpuclean::split {
namespace internal {

// Tensors whose value follows from constants alone (DENSIFY of sparse
// weights, DEQUANTIZE of fp16 weights, shape arithmetic).
std::vector<bool> ConstantValued(const ir::Subgraph& g, const std::vector<int>& order) {
  std::vector<bool> constant(g.tensors.size(), false);
  for (size_t t = 0; t < g.tensors.size(); ++t) constant[t] = g.tensors[t].is_const();
  for (int i : order) {
    const ir::Op& op = g.ops[i];
    if (op.code == tfl::BuiltinOperator_CUSTOM || op.inputs.empty()) continue;
    const bool all = std::all_of(op.inputs.begin(), op.inputs.end(), [&](int in) { return in < 0 || constant[in]; });
    if (all)
      for (int out : op.outputs)
        if (out >= 0) constant[out] = true;
  }
  return constant;
}

std::string FileSafe(const std::string& value) {
  std::string out;
  for (char c : value) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') ? c : '_';
  return out;
}

std::vector<PaddedOutput> PaddedOutputsNamed(const ir::Model& model,
                                             const std::function<std::string(int32_t)>& name_of) {
  const ir::Subgraph& g = model.main();
  const auto output_named = [&](const std::string& name) -> std::optional<std::string> {
    for (int32_t t : g.outputs)
      if (g.tensors[t].name == name) return name_of(t);
    return std::nullopt;
  };
  std::vector<PaddedOutput> out;
  for (const PaddedOutput& p : ReadPaddedOutputs(model)) {
    const auto output = output_named(p.output), count = output_named(p.count);
    if (output && count) out.push_back({*output, p.axis, *count});
  }
  return out;
}

}  // namespace internal

namespace {

int FindTensor(const ir::Subgraph& g, const std::string& name) {
  int found = -1;
  for (size_t t = 0; t < g.tensors.size(); ++t)
    if (g.tensors[t].name == name) {
      if (g.Producer(static_cast<int>(t)) >= 0) return static_cast<int>(t);
      found = static_cast<int>(t);
    }
  return found;
}

}  // namespace

namespace internal {

namespace {

ir::Op CastOp(int from, int to, ir::DType in, ir::DType out) {
  ir::Op op;
  op.code = tfl::BuiltinOperator_CAST;
  tfl::CastOptionsT o;
  o.in_data_type = in;
  o.out_data_type = out;
  op.options.Set(o);
  op.inputs = {from};
  op.outputs = {to};
  return op;
}

// LiteRT.js hands no BOOL buffer from one stage to the next ("Element type
// BOOL is not supported", measured on wasm and WebGPU): a mask that crosses
// a cut travels as int32 under its own name, cast at both ends. The model's
// own inputs and outputs keep their types.
void CarryMasksAsInt32(const ir::Subgraph& g, ir::Subgraph& part) {
  // The int32 twin of mask `t`, under t's name (t keeps its own as "|bool").
  const auto widened = [&](int t) {
    ir::Tensor wide = part.tensors[t];
    wide.dtype = tfl::TensorType_INT32;
    part.tensors[t].name += "|bool";
    return part.AddTensor(wide);
  };
  for (int32_t& t : part.outputs) {
    if (part.tensors[t].dtype != tfl::TensorType_BOOL || g.IsGraphOutput(t)) continue;
    const int w = widened(t);
    part.ops.push_back(CastOp(t, w, tfl::TensorType_BOOL, tfl::TensorType_INT32));
    t = w;
  }
  for (int32_t& t : part.inputs) {
    if (part.tensors[t].dtype != tfl::TensorType_BOOL || g.IsGraphInput(t)) continue;
    const int w = widened(t);
    part.ops.insert(part.ops.begin(), CastOp(w, t, tfl::TensorType_INT32, tfl::TensorType_BOOL));
    t = w;
  }
}

}  // namespace

Part MakePart(const ir::Model& model, const std::vector<int>& stage, const std::vector<bool>& constant,
              const std::vector<int>& order, int p, const std::string& description) {
  const ir::Subgraph& g = model.main();
  // Which stage produces each runtime tensor (-1: graph input / constant).
  std::vector<int> produced_in(g.tensors.size(), -1);
  for (size_t i = 0; i < g.ops.size(); ++i)
    if (stage[i] >= 0)
      for (int out : g.ops[i].outputs)
        if (out >= 0) produced_in[out] = stage[i];
  Part part;
  std::set<int> ops;
  for (size_t i = 0; i < g.ops.size(); ++i)
    if (stage[i] == p) ops.insert(static_cast<int>(i));
  part.ops = static_cast<int>(ops.size());
  // Constant-valued producers of anything these ops read come along.
  std::vector<int> stack;
  for (int i : ops) stack.insert(stack.end(), g.ops[i].inputs.begin(), g.ops[i].inputs.end());
  while (!stack.empty()) {
    const int t = stack.back();
    stack.pop_back();
    if (t < 0 || !constant[t]) continue;
    const int producer = g.Producer(t);
    if (producer >= 0 && ops.insert(producer).second)
      stack.insert(stack.end(), g.ops[producer].inputs.begin(), g.ops[producer].inputs.end());
  }
  std::vector<int> inputs, outputs;
  for (int t : g.inputs)
    for (int i : ops)
      if (std::count(g.ops[i].inputs.begin(), g.ops[i].inputs.end(), t)) {
        inputs.push_back(t);
        break;
      }
  std::set<int> crossing_in;
  for (int i : ops)
    for (int in : g.ops[i].inputs)
      if (in >= 0 && !constant[in] && produced_in[in] >= 0 && produced_in[in] != p) crossing_in.insert(in);
  inputs.insert(inputs.end(), crossing_in.begin(), crossing_in.end());
  for (int t : g.outputs)
    if (produced_in[t] == p && std::find(outputs.begin(), outputs.end(), t) == outputs.end()) outputs.push_back(t);
  std::set<int> crossing_out;
  for (size_t i = 0; i < g.ops.size(); ++i)
    if (stage[i] > p)
      for (int in : g.ops[i].inputs)
        if (in >= 0 && produced_in[in] == p && !g.IsGraphOutput(in)) crossing_out.insert(in);
  outputs.insert(outputs.end(), crossing_out.begin(), crossing_out.end());

  ir::Model m;
  m.version = model.version;
  m.description = description;
  m.subgraphs = model.subgraphs;  // control-flow ops keep their subgraph indices
  ir::Subgraph& sg = m.main();
  sg.ops.clear();
  for (int i : order)
    if (ops.count(i)) sg.ops.push_back(g.ops[i]);
  sg.inputs = inputs;
  sg.outputs = outputs;
  for (int t : inputs) {
    part.inputs.push_back(g.tensors[t].name);
    part.input_from.push_back(produced_in[t]);
    part.input_tensors.push_back(t);
    // A cut tensor becomes a graph input: no buffer, just its shape.
    sg.tensors[t].data.reset();
  }
  for (int t : outputs) {
    part.outputs.push_back(g.tensors[t].name);
    part.output_tensors.push_back(t);
  }
  CarryMasksAsInt32(g, sg);
  m.RemoveDeadTensors(0);
  m.Validate();
  part.model = std::move(m);
  return part;
}

}  // namespace internal

std::vector<Part> Cut(const ir::Model& model, const std::vector<std::string>& at) {
  const ir::Subgraph& g = model.main();
  if (at.empty()) throw Error(ErrorKind::kUsage, "split needs at least one tensor to cut at (--at T1[,T2...])");
  const std::vector<int> order = g.TopologicalOrder();
  std::vector<int> position(g.ops.size());
  for (size_t k = 0; k < order.size(); ++k) position[order[k]] = static_cast<int>(k);
  const std::vector<bool> constant = internal::ConstantValued(g, order);

  std::vector<int> cuts;
  for (const std::string& name : at) {
    const int t = FindTensor(g, name);
    if (t < 0)
      throw Error(ErrorKind::kUsage,
                  fmt::format("no tensor named '{}' in the graph (gpuclean inspect --json lists every tensor)", name));
    if (g.Producer(t) < 0 || constant[t])
      throw Error(ErrorKind::kUsage,
                  fmt::format("'{}' is a {}, not computed at run time; cut at a tensor an op computes from the inputs",
                              name, g.IsGraphInput(t) ? "graph input" : "constant"));
    if (std::find(cuts.begin(), cuts.end(), t) != cuts.end())
      throw Error(ErrorKind::kUsage, fmt::format("'{}' is named twice", name));
    cuts.push_back(t);
  }
  std::sort(cuts.begin(), cuts.end(), [&](int a, int b) { return position[g.Producer(a)] < position[g.Producer(b)]; });

  // Stage of each runtime op and the stage from which each tensor is available.
  std::vector<int> stage(g.ops.size(), -1), available(g.tensors.size(), 0);
  for (int i : order) {
    const ir::Op& op = g.ops[i];
    if (std::all_of(op.outputs.begin(), op.outputs.end(), [&](int t) { return t < 0 || constant[t]; })) continue;
    int s = 0;
    for (int in : op.inputs)
      if (in >= 0 && !constant[in]) s = std::max(s, available[in]);
    stage[i] = s;
    for (int out : op.outputs) {
      if (out < 0) continue;
      available[out] = s;
      const auto cut = std::find(cuts.begin(), cuts.end(), out);
      if (cut != cuts.end()) available[out] = std::max(s + 1, static_cast<int>(cut - cuts.begin()) + 1);
    }
  }
  const int num_parts = static_cast<int>(cuts.size()) + 1;
  for (int i = 0; i < static_cast<int>(g.ops.size()); ++i) stage[i] = std::min(stage[i], num_parts - 1);

  std::vector<Part> parts(num_parts);
  for (int p = 0; p < num_parts; ++p) {
    std::set<int> ops;
    for (size_t i = 0; i < g.ops.size(); ++i)
      if (stage[i] == p) ops.insert(static_cast<int>(i));
    if (ops.empty())
      throw Error(ErrorKind::kUsage,
                  fmt::format("the cut leaves part {} without ops (cut tensors: {}); choose tensors further apart",
                              p + 1, fmt::join(at, ", ")));
    parts[p] = internal::MakePart(model, stage, constant, order, p,
                                  fmt::format("gpuclean split: part {} of {}{}", p + 1, num_parts,
                                              model.source.empty() ? "" : " of " + model.source));
  }
  return parts;
}

std::vector<Part> CutByOrder(const ir::Model& model, int max_ops) {
  if (max_ops < 1) throw Error(ErrorKind::kUsage, "a part needs room for at least one op");
  const ir::Subgraph& g = model.main();
  const std::vector<int> order = g.TopologicalOrder();
  const std::vector<bool> constant = internal::ConstantValued(g, order);
  std::vector<int> runtime;
  for (int i : order)
    if (!std::all_of(g.ops[i].outputs.begin(), g.ops[i].outputs.end(), [&](int t) { return t < 0 || constant[t]; }))
      runtime.push_back(i);
  const int n = static_cast<int>(runtime.size());
  const int parts = std::max(1, (n + max_ops - 1) / max_ops);
  const int per_part = std::max(1, (n + parts - 1) / parts);
  std::vector<int> stage(g.ops.size(), -1);
  for (int k = 0; k < n; ++k) stage[runtime[k]] = k / per_part;
  std::vector<Part> out;
  for (int p = 0; p < parts; ++p)
    out.push_back(internal::MakePart(model, stage, constant, order, p,
                                     fmt::format("gpuclean split: part {} of {} under the compile ceiling{}", p + 1,
                                                 parts, model.source.empty() ? "" : " of " + model.source)));
  return out;
}

Proof ProveChain(const ir::Model& model, const std::vector<Part>& parts, uint32_t seed) {
  const ir::Subgraph& g = model.main();
  std::map<std::string, npy::Array> values;
  std::vector<npy::Array> inputs;
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    inputs.push_back(exec::GenerateInput(g.tensors[g.inputs[i]], seed, static_cast<int>(i)));
    values[g.tensors[g.inputs[i]].name] = inputs.back();
  }
  exec::Interpreter monolith(std::make_shared<const ir::Model>(model));
  for (size_t i = 0; i < inputs.size(); ++i) monolith.SetInput(static_cast<int>(i), inputs[i]);
  monolith.Invoke();

  for (size_t p = 0; p < parts.size(); ++p) {
    exec::Interpreter part(std::make_shared<const ir::Model>(parts[p].model));
    for (size_t i = 0; i < parts[p].inputs.size(); ++i) {
      auto it = values.find(parts[p].inputs[i]);
      if (it == values.end()) ThrowInternal(fmt::format("part {} input '{}' has no value", p + 1, parts[p].inputs[i]));
      part.SetInput(static_cast<int>(i), it->second);
    }
    part.Invoke();
    for (size_t o = 0; o < parts[p].outputs.size(); ++o) values[parts[p].outputs[o]] = part.Output(static_cast<int>(o));
  }

  Proof proof;
  for (int i = 0; i < monolith.num_outputs(); ++i) {
    ++proof.outputs;
    const std::string& name = g.tensors[g.outputs[i]].name;
    const npy::Array want = monolith.Output(i);
    auto it = values.find(name);
    if (it == values.end()) {
      proof.bit_exact = false;
      proof.mismatches.push_back(fmt::format("output '{}' is not produced by any part", name));
    } else if (it->second.dtype != want.dtype || it->second.shape != want.shape || it->second.data != want.data) {
      proof.bit_exact = false;
      size_t differing = 0;
      for (size_t b = 0; b < std::min(want.data.size(), it->second.data.size()); ++b)
        differing += want.data[b] != it->second.data[b];
      proof.mismatches.push_back(
          fmt::format("output '{}' differs from the monolith ({} of {} bytes)", name, differing, want.data.size()));
    }
  }
  return proof;
}

std::vector<std::string> WriteParts(const std::vector<Part>& parts, const std::string& prefix,
                                    const nlohmann::json& spec) {
  std::vector<std::string> files;
  for (size_t p = 0; p < parts.size(); ++p) {
    files.push_back(fmt::format("{}.part{}.tflite", prefix, p + 1));
    format::WriteModel(parts[p].model, files.back());
  }
  WriteFileAtomically(prefix + ".pipeline.json",
                      spec.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  return files;
}

nlohmann::json ChainJson(const ir::Model& model, const std::vector<Part>& parts, const std::vector<std::string>& files,
                         const Proof& proof) {
  const ir::Subgraph& g = model.main();
  pipeline::Spec spec;
  spec.source = model.source;
  for (int32_t t : g.inputs) spec.inputs.push_back(g.tensors[t].name);
  for (int32_t t : g.outputs) spec.outputs.push_back(g.tensors[t].name);
  spec.valid_rows = internal::PaddedOutputsNamed(model, [&](int32_t t) { return g.tensors[t].name; });
  for (size_t p = 0; p < parts.size(); ++p) {
    pipeline::Stage stage;
    stage.name = fmt::format("part{}", p + 1);
    // Beside the spec: the file name alone.
    stage.graph = p < files.size() && !files[p].empty() ? std::filesystem::path(files[p]).filename().string()
                                                        : fmt::format("(not written: part{})", p + 1);
    stage.placement = "gpu";
    stage.inputs = parts[p].inputs;
    stage.outputs = parts[p].outputs;
    stage.ops = parts[p].ops;
    spec.stages.push_back(std::move(stage));
  }
  spec.proof = {{"kind", "bit-exact against the monolith on seeded inputs"},
                {"bit_exact", proof.bit_exact},
                {"outputs", proof.outputs},
                {"mismatches", proof.mismatches}};
  return pipeline::ToJson(spec);
}

std::string DescribeChain(const ir::Model& model, const std::vector<Part>& parts,
                          const std::vector<std::string>& files) {
  const ir::Subgraph& g = model.main();
  std::set<std::string> graph_outputs;
  for (int t : g.outputs) graph_outputs.insert(g.tensors[t].name);
  std::string out;
  for (size_t p = 0; p < parts.size(); ++p) {
    const Part& part = parts[p];
    const ir::Subgraph& sg = part.model.main();
    out += fmt::format("part {}: {} ({} ops)\n", p + 1, p < files.size() ? files[p] : "(not written)", part.ops);
    for (size_t i = 0; i < part.inputs.size(); ++i) {
      const ir::Tensor& t = sg.tensors[sg.inputs[i]];
      out += fmt::format(
          "  in  {} {} {}  <- {}\n", t.name, ir::DTypeName(t.dtype), ir::FormatShape(t.shape),
          part.input_from[i] < 0 ? std::string("model input") : fmt::format("part {} output", part.input_from[i] + 1));
    }
    for (size_t o = 0; o < part.outputs.size(); ++o) {
      const ir::Tensor& t = sg.tensors[sg.outputs[o]];
      out += fmt::format("  out {} {} {}{}\n", t.name, ir::DTypeName(t.dtype), ir::FormatShape(t.shape),
                         graph_outputs.count(t.name) ? "  -> model output" : "");
    }
  }
  return out;
}

}  // namespace gpuclean::split
