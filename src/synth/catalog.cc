#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <set>

#include "gpuclean/error.h"
#include "gpuclean/format.h"
#include "gpuclean/synth.h"
#include "synth/graphs.h"

namespace gpuclean::synth {
namespace {

std::string ValidNames() {
  std::string s = "probes, patterns, all";
  for (const SynthGraph& g : Catalog()) s += ", " + g.name;
  return s;
}

// lowbias32 (a published 32-bit integer hash): good avalanche, two
// multiplies, easy to reproduce in numpy for users who want the same input.
uint32_t Hash32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

}  // namespace

std::string_view GroupName(Group group) { return group == Group::kProbe ? "probe" : "pattern"; }

const std::vector<SynthGraph>& Catalog() {
  static const std::vector<SynthGraph> catalog = [] {
    std::vector<SynthGraph> all = internal::ProbeGraphs();
    std::vector<SynthGraph> patterns = internal::PatternGraphs();
    all.insert(all.end(), std::make_move_iterator(patterns.begin()), std::make_move_iterator(patterns.end()));
    return all;
  }();
  return catalog;
}

const SynthGraph* Find(std::string_view name) {
  for (const SynthGraph& g : Catalog())
    if (g.name == name) return &g;
  return nullptr;
}

ir::Model Build(std::string_view name) {
  const SynthGraph* g = Find(name);
  if (!g) throw Error(ErrorKind::kUsage, fmt::format("unknown synth graph '{}'; valid: {}", name, ValidNames()));
  return g->build();
}

std::vector<const SynthGraph*> Resolve(const std::vector<std::string>& names) {
  std::vector<const SynthGraph*> out;
  std::set<const SynthGraph*> seen;
  auto add = [&](const SynthGraph* g) {
    if (seen.insert(g).second) out.push_back(g);
  };
  for (const std::string& name : names) {
    if (name == "probes" || name == "patterns" || name == "all") {
      for (const SynthGraph& g : Catalog())
        if (name == "all" || (name == "probes") == (g.group == Group::kProbe)) add(&g);
      continue;
    }
    const SynthGraph* g = Find(name);
    if (!g) throw Error(ErrorKind::kUsage, fmt::format("unknown synth graph '{}'; valid: {}", name, ValidNames()));
    add(g);
  }
  return out;
}

Written Write(const SynthGraph& graph, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error(ErrorKind::kIo, fmt::format("{}: cannot create: {}", dir, ec.message()));
  Written w;
  w.model = (std::filesystem::path(dir) / (graph.name + ".tflite")).string();
  format::WriteModel(graph.build(), w.model);
  if (graph.inputs) {
    const std::vector<npy::Array> inputs = graph.inputs();
    for (size_t i = 0; i < inputs.size(); ++i) {
      w.inputs.push_back((std::filesystem::path(dir) / fmt::format("{}.in{}.npy", graph.name, i)).string());
      npy::Write(w.inputs.back(), inputs[i]);
    }
  }
  return w;
}

npy::Array HashUniform(std::vector<int64_t> shape, float lo, float hi, uint32_t seed) {
  npy::Array a;
  a.dtype = tfl::TensorType_FLOAT32;
  a.shape = std::move(shape);
  const int64_t n = a.num_elements();
  a.data.resize(static_cast<size_t>(n) * sizeof(float));
  float* v = a.as<float>();
  for (int64_t i = 0; i < n; ++i) {
    // 24 random bits -> [0, 1) exactly representable in float.
    const uint32_t h = Hash32(static_cast<uint32_t>(i) + seed * 0x9E3779B9U);
    const float u = static_cast<float>(h >> 8) * (1.0f / 16777216.0f);
    v[i] = lo + (hi - lo) * u;
  }
  return a;
}

}  // namespace gpuclean::synth
