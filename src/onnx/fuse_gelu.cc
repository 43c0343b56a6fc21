// The forms matched, in any operand order of each Mul and Add:
//   d = x / sqrt2 | x * (1/sqrt2);  e = Erf(d);  p = e + 1;  then
//   y = (x * p) * 0.5  (PyTorch),  y = (x * 0.5) * p  (onnxruntime's and our
//   Gelu expansions),  or  y = x * (p * 0.5).
// Every intermediate value has the pattern as its only reader and is not a
// graph output; the constants are scalars within 1e-5 relative.
#include "onnx/fuse_gelu.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

namespace gpuclean::onnx {
namespace {

class GeluMatcher {
 public:
  explicit GeluMatcher(const Graph& g) : g_(g) {
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      for (const std::string& out : g.nodes[i].outputs) producer_[out] = static_cast<int>(i);
      for (const std::string& in : g.nodes[i].inputs) ++readers_[in];
    }
    for (const ValueInfo& out : g.outputs) readers_[out.name] += 2;  // never an intermediate
  }

  // The nodes of the match whose Erf is node `erf`, its x and its y.
  struct Match {
    std::vector<int> nodes;
    std::string x, y;
  };
  std::optional<Match> At(int erf) const {
    const Node& e = g_.nodes[erf];
    if (e.op_type != "Erf" || e.inputs.size() != 1 || e.outputs.size() != 1) return std::nullopt;
    Match m;
    // d = x / sqrt2 or x * (1 / sqrt2).
    const int div = SoleIntermediate(e.inputs[0]);
    if (div < 0) return std::nullopt;
    const Node& d = g_.nodes[div];
    if (d.op_type == "Div" && d.inputs.size() == 2 && Near(d.inputs[1], std::sqrt(2.0))) {
      m.x = d.inputs[0];
    } else if (d.op_type == "Mul" && d.inputs.size() == 2) {
      const int k = Near(d.inputs[1], std::sqrt(0.5)) ? 0 : Near(d.inputs[0], std::sqrt(0.5)) ? 1 : -1;
      if (k < 0) return std::nullopt;
      m.x = d.inputs[k];
    } else {
      return std::nullopt;
    }
    // p = e + 1.
    const int add = SoleReader(e.outputs[0]);
    if (add < 0 || !Binary(add, "Add") || OtherOperand(add, e.outputs[0]) == "" ||
        !Near(OtherOperand(add, e.outputs[0]), 1.0))
      return std::nullopt;
    const std::string p = g_.nodes[add].outputs[0];
    const int m1 = SoleReader(p);
    if (m1 < 0 || !Binary(m1, "Mul")) return std::nullopt;
    const std::string other = OtherOperand(m1, p);
    const std::string m1_out = g_.nodes[m1].outputs[0];
    m.nodes = {div, erf, add, m1};
    if (other == m.x || Near(other, 0.5)) {
      // (x * p) * 0.5, or (p * 0.5) * x.
      const int m2 = SoleReader(m1_out);
      if (m2 < 0 || !Binary(m2, "Mul")) return std::nullopt;
      const std::string last = OtherOperand(m2, m1_out);
      if (!(other == m.x ? Near(last, 0.5) : last == m.x)) return std::nullopt;
      m.nodes.push_back(m2);
      m.y = g_.nodes[m2].outputs[0];
    } else {
      // (x * 0.5) * p.
      const auto h = producer_.find(other);
      if (h == producer_.end() || !Binary(h->second, "Mul") || SoleReader(other) != m1) return std::nullopt;
      const std::string half_of = OtherOperand(h->second, m.x);
      if (half_of.empty() || !Near(half_of, 0.5)) return std::nullopt;
      m.nodes.push_back(h->second);
      m.y = m1_out;
    }
    return m;
  }

 private:
  bool Binary(int node, const char* op) const {
    const Node& n = g_.nodes[node];
    return n.op_type == op && n.inputs.size() == 2 && n.outputs.size() == 1;
  }
  // The other input of binary `node` when one is `name`, else "".
  std::string OtherOperand(int node, const std::string& name) const {
    const Node& n = g_.nodes[node];
    if (n.inputs[0] == name) return n.inputs[1];
    if (n.inputs[1] == name) return n.inputs[0];
    return "";
  }
  int SoleReader(const std::string& value) const {
    const auto r = readers_.find(value);
    if (r == readers_.end() || r->second != 1) return -1;
    for (size_t i = 0; i < g_.nodes.size(); ++i)
      for (const std::string& in : g_.nodes[i].inputs)
        if (in == value) return static_cast<int>(i);
    return -1;
  }
  // The producer of `value` when the value has one reader.
  int SoleIntermediate(const std::string& value) const {
    const auto p = producer_.find(value);
    const auto r = readers_.find(value);
    return p == producer_.end() || r == readers_.end() || r->second != 1 ? -1 : p->second;
  }
  std::optional<float> Scalar(const std::string& name) const {
    const npy::Array* a = nullptr;
    if (const auto it = g_.initializers.find(name); it != g_.initializers.end()) a = &it->second;
    if (const auto p = producer_.find(name); !a && p != producer_.end() && g_.nodes[p->second].op_type == "Constant") {
      const auto v = g_.nodes[p->second].attributes.find("value");
      if (v != g_.nodes[p->second].attributes.end() && v->second.tensor) a = &*v->second.tensor;
    }
    if (!a || a->num_elements() != 1) return std::nullopt;
    if (a->dtype == tfl::TensorType_FLOAT32) return a->as<float>()[0];
    if (a->dtype == tfl::TensorType_FLOAT64) return static_cast<float>(a->as<double>()[0]);
    return std::nullopt;
  }
  bool Near(const std::string& name, double want) const {
    const auto v = Scalar(name);
    return v && std::fabs(*v - want) <= 1e-5 * std::fabs(want);
  }

  const Graph& g_;
  std::map<std::string, int> producer_;
  std::map<std::string, int> readers_;
};

}  // namespace

int FuseExactGelu(Graph& graph) {
  std::vector<GeluMatcher::Match> matches;
  {
    const GeluMatcher matcher(graph);
    std::set<int> taken;
    for (size_t i = 0; i < graph.nodes.size(); ++i) {
      auto m = matcher.At(static_cast<int>(i));
      if (!m) continue;
      bool overlaps = false;
      for (int n : m->nodes) overlaps = overlaps || taken.count(n);
      if (overlaps) continue;
      taken.insert(m->nodes.begin(), m->nodes.end());
      matches.push_back(std::move(*m));
    }
  }
  if (matches.empty()) return 0;
  // The Gelu node takes the place of the match's last node, so every reader
  // of y still comes after it.
  std::set<int> removed;
  std::map<int, Node> replacement;
  for (const auto& m : matches) {
    int last = *std::max_element(m.nodes.begin(), m.nodes.end());
    Node gelu;
    gelu.name = graph.nodes[last].name.empty() ? m.y : graph.nodes[last].name;
    gelu.op_type = "Gelu";
    gelu.inputs = {m.x};
    gelu.outputs = {m.y};
    for (int n : m.nodes) removed.insert(n);
    replacement[last] = std::move(gelu);
  }
  std::vector<Node> nodes;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const int k = static_cast<int>(i);
    if (const auto r = replacement.find(k); r != replacement.end()) {
      nodes.push_back(std::move(r->second));
    } else if (!removed.count(k)) {
      nodes.push_back(std::move(graph.nodes[i]));
    }
  }
  for (size_t i = 0; i < nodes.size(); ++i)
    nodes[i].index = static_cast<int>(i);  // positions, as the bisect reads them
  graph.nodes = std::move(nodes);
  return static_cast<int>(matches.size());
}

}  // namespace gpuclean::onnx
