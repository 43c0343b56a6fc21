#include "onnx/proto_edit.h"

#include <cstring>

#include <fmt/format.h>

namespace gpuclean::onnx {
namespace pb = ::onnx;

std::string OneLine(std::string text) {
  for (char& c : text)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  if (text.size() > 400) text = text.substr(0, 400) + "...";
  return text;
}

bool AnyNode(const pb::GraphProto& g, const std::function<bool(const pb::NodeProto&)>& matches) {
  for (const auto& n : g.node()) {
    if (matches(n)) return true;
    for (const auto& a : n.attribute()) {
      if (a.has_g() && AnyNode(a.g(), matches)) return true;
      for (const auto& sub : a.graphs())
        if (AnyNode(sub, matches)) return true;
    }
  }
  return false;
}

std::string NodeLabel(const pb::NodeProto& n) {
  return n.name().empty() ? n.op_type() + " '" + (n.output_size() ? n.output(0) : std::string()) + "'"
                          : n.op_type() + " '" + n.name() + "'";
}

const pb::AttributeProto* FindAttr(const pb::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

// Removes `name` and returns whether it was there.
bool RemoveAttr(pb::NodeProto& n, const std::string& name) {
  auto* attrs = n.mutable_attribute();
  for (int i = 0; i < attrs->size(); ++i)
    if (attrs->Get(i).name() == name) {
      attrs->DeleteSubrange(i, 1);
      return true;
    }
  return false;
}

int64_t IntAttr(const pb::NodeProto& n, const std::string& name, int64_t fallback) {
  const auto* a = FindAttr(n, name);
  return a ? a->i() : fallback;
}

std::string StrAttr(const pb::NodeProto& n, const std::string& name, const std::string& fallback) {
  const auto* a = FindAttr(n, name);
  return a ? a->s() : fallback;
}

void SetInt(pb::NodeProto& n, const std::string& name, int64_t v) {
  RemoveAttr(n, name);
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(pb::AttributeProto::INT);
  a->set_i(v);
}

void SetFloat(pb::NodeProto& n, const std::string& name, float v) {
  RemoveAttr(n, name);
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(pb::AttributeProto::FLOAT);
  a->set_f(v);
}

void SetStr(pb::NodeProto& n, const std::string& name, const std::string& v) {
  RemoveAttr(n, name);
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(pb::AttributeProto::STRING);
  a->set_s(v);
}

void SetInts(pb::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
  RemoveAttr(n, name);
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(pb::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

std::vector<int64_t> IntsOf(const pb::TensorProto& t) {
  std::vector<int64_t> out;
  if (t.data_type() == pb::TensorProto::INT64) {
    if (t.has_raw_data()) {
      out.resize(t.raw_data().size() / 8);
      if (!out.empty()) std::memcpy(out.data(), t.raw_data().data(), out.size() * 8);
    } else {
      out.assign(t.int64_data().begin(), t.int64_data().end());
    }
  } else if (t.data_type() == pb::TensorProto::INT32) {
    if (t.has_raw_data()) {
      std::vector<int32_t> v(t.raw_data().size() / 4);
      if (!v.empty()) std::memcpy(v.data(), t.raw_data().data(), v.size() * 4);
      out.assign(v.begin(), v.end());
    } else {
      out.assign(t.int32_data().begin(), t.int32_data().end());
    }
  }
  return out;
}

std::vector<float> FloatsOf(const pb::TensorProto& t) {
  std::vector<float> out;
  if (t.data_type() != pb::TensorProto::FLOAT) return out;
  if (t.has_raw_data()) {
    out.resize(t.raw_data().size() / 4);
    if (!out.empty()) std::memcpy(out.data(), t.raw_data().data(), out.size() * 4);
  } else {
    out.assign(t.float_data().begin(), t.float_data().end());
  }
  return out;
}

float FloatAttr(const pb::NodeProto& n, const std::string& name, float fallback) {
  const auto* a = FindAttr(n, name);
  return a ? a->f() : fallback;
}

std::vector<int64_t> IntsAttr(const pb::NodeProto& n, const std::string& name) {
  const auto* a = FindAttr(n, name);
  return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : std::vector<int64_t>{};
}

std::string NodeWriter::Fresh(const std::string& base) {
  return fmt::format("{}__{}_{}", base, tag_, known_.fresh_names++);
}

std::string NodeWriter::IntsConst(const std::string& base, const std::vector<int64_t>& values) {
  pb::TensorProto t;
  t.set_name(Fresh(base));
  t.set_data_type(pb::TensorProto::INT64);
  t.add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values) t.add_int64_data(v);
  initializers_.push_back(t);
  return t.name();
}

std::string NodeWriter::FloatsConst(const std::string& base, const std::vector<int64_t>& dims,
                                    const std::vector<float>& values) {
  pb::TensorProto t;
  t.set_name(Fresh(base));
  t.set_data_type(pb::TensorProto::FLOAT);
  for (int64_t d : dims) t.add_dims(d);
  for (float v : values) t.add_float_data(v);
  initializers_.push_back(t);
  return t.name();
}

pb::NodeProto& NodeWriter::Emit(const std::string& op, std::vector<std::string> inputs,
                                std::vector<std::string> outputs, const pb::NodeProto& from) {
  pb::NodeProto n;
  n.set_op_type(op);
  if (!from.name().empty()) n.set_name(Fresh(from.name()));
  for (auto& i : inputs) n.add_input(std::move(i));
  for (auto& o : outputs) n.add_output(std::move(o));
  out_.push_back(std::move(n));
  return out_.back();
}

void NodeWriter::EmitGelu(const std::string& x, const std::string& y, bool tanh, const pb::NodeProto& from) {
  std::string inner = Fresh(y + (tanh ? "_tanh" : "_erf"));
  if (tanh) {
    // sqrt(2/pi) * x * (1 + 0.044715 x^2), as onnxruntime's FastGelu groups it.
    const std::string sq = Fresh(y + "_sq"), poly = Fresh(y + "_poly"), scaled = Fresh(y + "_scaled"),
                      arg = Fresh(y + "_arg");
    Emit("Mul", {x, x}, {sq}, from);
    Emit("Mul", {sq, Scalar(y + "_c", 0.035677408136300125f)}, {poly}, from);
    Emit("Add", {poly, Scalar(y + "_b", 0.7978845608028654f)}, {scaled}, from);
    Emit("Mul", {x, scaled}, {arg}, from);
    Emit("Tanh", {arg}, {inner}, from);
  } else {
    const std::string arg = Fresh(y + "_arg");
    Emit("Mul", {x, Scalar(y + "_inv_sqrt2", 0.70710678118654752f)}, {arg}, from);
    Emit("Erf", {arg}, {inner}, from);
  }
  const std::string one_plus = Fresh(y + "_1p"), half = Fresh(y + "_half");
  Emit("Add", {inner, Scalar(y + "_one", 1.0f)}, {one_plus}, from);
  Emit("Mul", {x, Scalar(y + "_halfc", 0.5f)}, {half}, from);
  Emit("Mul", {half, one_plus}, {y}, from);
}

void NodeWriter::Commit(pb::GraphProto& graph) {
  graph.clear_node();
  for (auto& n : out_) *graph.add_node() = std::move(n);
  for (auto& t : initializers_) *graph.add_initializer() = std::move(t);
  out_.clear();
  initializers_.clear();
}

}  // namespace gpuclean::onnx
