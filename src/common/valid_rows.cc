#include "gpuclean/valid_rows.h"

#include <fmt/format.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "gpuclean/error.h"

namespace gpuclean {

std::vector<PaddedOutput> ReadPaddedOutputs(const ir::Model& model) {
  std::vector<PaddedOutput> out;
  for (const ir::Metadata& m : model.metadata) {
    if (m.name != kValidRowsMetadata) continue;
    try {
      const auto j = nlohmann::json::parse(std::string(reinterpret_cast<const char*>(m.data.data()), m.data.size()));
      for (const auto& [tensor, o] : j.items()) out.push_back({tensor, o.at("axis").get<int>(), o.at("count")});
    } catch (const std::exception&) {
      ThrowBadInput(fmt::format("{}: metadata '{}' is not the JSON convert writes", model.source, kValidRowsMetadata));
    }
  }
  return out;
}

void WritePaddedOutputs(ir::Model& model, const std::vector<PaddedOutput>& padded) {
  if (padded.empty()) return;
  nlohmann::json j = nlohmann::json::object();
  for (const PaddedOutput& p : padded) j[p.output] = {{"axis", p.axis}, {"count", p.count}};
  const std::string text = j.dump();
  model.metadata.push_back(
      {kValidRowsMetadata, Bytes::Copy({reinterpret_cast<const uint8_t*>(text.data()), text.size()})});
}

npy::Array FirstRows(const npy::Array& a, int axis, int64_t rows) {
  if (axis < 0 || axis >= static_cast<int>(a.shape.size()) || rows < 0 || rows > a.shape[axis])
    ThrowBadInput(fmt::format("{} valid rows along axis {} of a [{}] output", rows, axis, fmt::join(a.shape, ",")));
  int64_t outer = 1, inner = static_cast<int64_t>(ir::DTypeSize(a.dtype));
  for (int d = 0; d < axis; ++d) outer *= a.shape[d];
  for (size_t d = static_cast<size_t>(axis) + 1; d < a.shape.size(); ++d) inner *= a.shape[d];
  npy::Array out;
  out.dtype = a.dtype;
  out.shape = a.shape;
  out.shape[axis] = rows;
  out.data.resize(static_cast<size_t>(outer * rows * inner));
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(out.data.data() + o * rows * inner, a.data.data() + o * a.shape[axis] * inner,
                static_cast<size_t>(rows * inner));
  return out;
}

void TrimToValidRows(const ir::Subgraph& graph, const std::vector<PaddedOutput>& padded,
                     std::vector<npy::Array>& outputs) {
  const auto index_of = [&](const std::string& name) {
    for (size_t k = 0; k < graph.outputs.size() && k < outputs.size(); ++k)
      if (graph.tensors[graph.outputs[k]].name == name) return static_cast<int>(k);
    return -1;
  };
  for (const PaddedOutput& p : padded) {
    const int o = index_of(p.output), c = index_of(p.count);
    if (o < 0 || c < 0) continue;
    const npy::Array& count = outputs[c];
    if (count.num_elements() != 1 || count.dtype != tfl::TensorType_INT32)
      ThrowBadInput(fmt::format("count output '{}' is not one int32", p.count));
    outputs[o] = FirstRows(outputs[o], p.axis, count.as<int32_t>()[0]);
  }
}

}  // namespace gpuclean
