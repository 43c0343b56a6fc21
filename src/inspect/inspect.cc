#include "gpuclean/inspect.h"

#include <fmt/format.h>

#include <sys/stat.h>
#include <map>
#include <set>

namespace gpuclean::inspect {
namespace {

using nlohmann::json;

json TensorJson(const ir::Subgraph& sg, int32_t index) {
  if (index < 0) return json{{"tensor", -1}, {"name", nullptr}};
  const ir::Tensor& t = sg.tensors[index];
  json j{{"tensor", index}, {"name", t.name}, {"dtype", ir::DTypeName(t.dtype)}, {"shape", t.shape}};
  if (!t.shape_signature.empty() && t.shape_signature != t.shape) j["shape_signature"] = t.shape_signature;
  if (t.is_const()) j["const"] = true;
  if (t.sparsity) j["sparse"] = true;
  if (!t.quant.scale.empty()) j["quantized"] = true;
  return j;
}

std::string ShapeText(const json& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i].get<int64_t>());
  return s + "]";
}

}  // namespace

json Summarize(const ir::Model& model) {
  json out;
  out["file"] = model.source;
  struct stat st {};
  if (!model.source.empty() && stat(model.source.c_str(), &st) == 0) out["file_bytes"] = st.st_size;
  out["schema_version"] = model.version;
  out["description"] = model.description;
  out["subgraph_count"] = model.subgraphs.size();

  const ir::Subgraph& main = model.main();
  for (int32_t t : main.inputs) out["inputs"].push_back(TensorJson(main, t));
  for (int32_t t : main.outputs) out["outputs"].push_back(TensorJson(main, t));
  if (!out.contains("inputs")) out["inputs"] = json::array();
  if (!out.contains("outputs")) out["outputs"] = json::array();

  std::map<std::string, int> histogram;
  std::map<std::string, std::pair<int64_t, int64_t>> weights;  // dtype -> (tensors, bytes)
  std::set<std::string> custom_ops;
  int max_rank = 0;
  int64_t weight_bytes = 0;
  bool dynamic = false;
  json subgraphs = json::array(), sparse = json::array(), ops = json::array();
  for (size_t s = 0; s < model.subgraphs.size(); ++s) {
    const ir::Subgraph& sg = model.subgraphs[s];
    subgraphs.push_back({{"index", s},
                         {"name", sg.name},
                         {"tensors", sg.tensors.size()},
                         {"ops", sg.ops.size()},
                         {"inputs", sg.inputs.size()},
                         {"outputs", sg.outputs.size()}});
    for (size_t i = 0; i < sg.ops.size(); ++i) {
      const ir::Op& op = sg.ops[i];
      histogram[op.name()]++;
      if (op.code == tfl::BuiltinOperator_CUSTOM) custom_ops.insert(op.custom_code);
      json jop{{"subgraph", s}, {"index", i}, {"op", op.name()}, {"version", op.version}};
      if (op.code == tfl::BuiltinOperator_CUSTOM) jop["custom"] = true;
      for (int32_t t : op.inputs) jop["inputs"].push_back(TensorJson(sg, t));
      for (int32_t t : op.outputs) jop["outputs"].push_back(TensorJson(sg, t));
      ops.push_back(std::move(jop));
    }
    for (size_t t = 0; t < sg.tensors.size(); ++t) {
      const ir::Tensor& tensor = sg.tensors[t];
      max_rank = std::max(max_rank, tensor.rank());
      dynamic = dynamic || tensor.is_dynamic();
      if (tensor.is_const()) {
        auto& w = weights[std::string(ir::DTypeName(tensor.dtype))];
        w.first++;
        w.second += static_cast<int64_t>(tensor.data->size());
        weight_bytes += static_cast<int64_t>(tensor.data->size());
      }
      if (tensor.sparsity)
        sparse.push_back({{"subgraph", s},
                          {"tensor", t},
                          {"name", tensor.name},
                          {"dtype", ir::DTypeName(tensor.dtype)},
                          {"shape", tensor.shape},
                          {"stored_bytes", tensor.is_const() ? tensor.data->size() : 0}});
    }
  }
  out["subgraphs"] = subgraphs;
  out["op_count"] = ops.size();
  out["op_histogram"] = histogram;
  out["ops"] = ops;
  json jw = json::object();
  for (const auto& [dtype, w] : weights) jw[dtype] = {{"tensors", w.first}, {"bytes", w.second}};
  out["weights"] = jw;
  out["weight_bytes"] = weight_bytes;
  out["max_rank"] = max_rank;
  out["dynamic_shapes"] = dynamic;
  out["custom_ops"] = custom_ops;
  out["sparse_tensors"] = sparse;
  json sigs = json::array();
  for (const ir::SignatureDef& sig : model.signatures) {
    json js{{"key", sig.key}, {"subgraph", sig.subgraph}, {"inputs", json::array()}, {"outputs", json::array()}};
    for (const auto& r : sig.inputs) js["inputs"].push_back({{"name", r.name}, {"tensor", r.tensor}});
    for (const auto& r : sig.outputs) js["outputs"].push_back({{"name", r.name}, {"tensor", r.tensor}});
    sigs.push_back(std::move(js));
  }
  out["signatures"] = sigs;
  json md = json::array();
  for (const ir::Metadata& m : model.metadata) md.push_back({{"name", m.name}, {"bytes", m.data.size()}});
  out["metadata"] = md;
  return out;
}

std::string RenderText(const json& s) {
  std::string out;
  auto line = [&](const std::string& l) { out += l + "\n"; };
  line(fmt::format("model      {}{}", s.value("file", ""),
                   s.contains("file_bytes") ? fmt::format(" ({} bytes)", s["file_bytes"].get<int64_t>()) : ""));
  line(fmt::format("subgraphs  {}   ops {}   max rank {}{}", s["subgraph_count"].get<int>(), s["op_count"].get<int>(),
                   s["max_rank"].get<int>(), s["dynamic_shapes"].get<bool>() ? "   dynamic shapes" : ""));
  for (const char* kind : {"inputs", "outputs"}) {
    line(fmt::format("{}:", kind));
    for (const auto& t : s[kind])
      line(fmt::format("  {:<40} {:<8} {}", t["name"].get<std::string>(), t["dtype"].get<std::string>(),
                       ShapeText(t["shape"])));
  }
  line("op histogram:");
  std::vector<std::pair<int, std::string>> hist;
  for (const auto& [name, count] : s["op_histogram"].items()) hist.emplace_back(count.get<int>(), name);
  std::sort(hist.begin(), hist.end(),
            [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  for (const auto& [count, name] : hist) line(fmt::format("  {:>5}  {}", count, name));
  line(fmt::format("weights: {} bytes", s["weight_bytes"].get<int64_t>()));
  for (const auto& [dtype, w] : s["weights"].items())
    line(fmt::format("  {:<8} {:>6} tensors {:>12} bytes", dtype, w["tensors"].get<int64_t>(),
                     w["bytes"].get<int64_t>()));
  if (!s["custom_ops"].empty()) {
    std::string names;
    for (const auto& c : s["custom_ops"]) names += (names.empty() ? "" : ", ") + c.get<std::string>();
    line("custom ops: " + names);
  }
  if (!s["sparse_tensors"].empty()) {
    line(fmt::format("sparse tensors: {}", s["sparse_tensors"].size()));
    for (const auto& t : s["sparse_tensors"])
      line(fmt::format("  {:<40} {:<8} {}", t["name"].get<std::string>(), t["dtype"].get<std::string>(),
                       ShapeText(t["shape"])));
  }
  for (const auto& sig : s["signatures"])
    line(fmt::format("signature '{}' (subgraph {}): {} inputs, {} outputs", sig["key"].get<std::string>(),
                     sig["subgraph"].get<int>(), sig["inputs"].size(), sig["outputs"].size()));
  for (const auto& m : s["metadata"])
    line(fmt::format("metadata '{}' ({} bytes)", m["name"].get<std::string>(), m["bytes"].get<int64_t>()));
  line("ops:");
  for (const auto& op : s["ops"]) {
    std::string ins, outs;
    for (const auto& t : op.value("inputs", json::array())) {
      if (t["tensor"].get<int>() < 0) {
        ins += (ins.empty() ? "" : ", ") + std::string("-");
        continue;
      }
      ins += fmt::format("{}{}{}", ins.empty() ? "" : ", ", ShapeText(t["shape"]), t.value("const", false) ? "c" : "");
    }
    for (const auto& t : op.value("outputs", json::array()))
      outs += fmt::format("{}{}", outs.empty() ? "" : ", ", ShapeText(t["shape"]));
    line(fmt::format("  {:>2}:{:<4} {:<28} v{}  ({}) -> {}", op["subgraph"].get<int>(), op["index"].get<int>(),
                     op["op"].get<std::string>(), op["version"].get<int>(), ins, outs));
  }
  return out;
}

}  // namespace gpuclean::inspect
