#include "onnx/onnx_test_model.h"

#include <onnx/onnx_pb.h>

#include <cstring>
#include <fstream>

#include <fp16.h>
#include <stdexcept>

namespace gpuclean::testing {

namespace pb = ::onnx;

struct OnnxTestModel::Impl {
  pb::ModelProto model;
};

OnnxTestModel::OnnxTestModel(int opset) : impl_(std::make_unique<Impl>()) {
  // The IR version each ONNX release wrote with its newest opset.
  impl_->model.set_ir_version(opset >= 21 ? 10 : opset >= 19 ? 9 : 8);
  impl_->model.set_producer_name("gpuclean-tests");
  auto* o = impl_->model.add_opset_import();
  o->set_domain("");
  o->set_version(opset);
  impl_->model.mutable_graph()->set_name("test");
}

OnnxTestModel::~OnnxTestModel() = default;
OnnxTestModel::OnnxTestModel(OnnxTestModel&&) noexcept = default;
OnnxTestModel& OnnxTestModel::operator=(OnnxTestModel&&) noexcept = default;

namespace {
pb::AttributeProto* Attr(void* node, const std::string& name, pb::AttributeProto::AttributeType type) {
  auto* a = static_cast<pb::NodeProto*>(node)->add_attribute();
  a->set_name(name);
  a->set_type(type);
  return a;
}
}  // namespace

OnnxTestModel::NodeRef& OnnxTestModel::NodeRef::Int(const std::string& name, int64_t v) {
  Attr(node_, name, pb::AttributeProto::INT)->set_i(v);
  return *this;
}
OnnxTestModel::NodeRef& OnnxTestModel::NodeRef::Float(const std::string& name, float v) {
  Attr(node_, name, pb::AttributeProto::FLOAT)->set_f(v);
  return *this;
}
OnnxTestModel::NodeRef& OnnxTestModel::NodeRef::Str(const std::string& name, const std::string& v) {
  Attr(node_, name, pb::AttributeProto::STRING)->set_s(v);
  return *this;
}
OnnxTestModel::NodeRef& OnnxTestModel::NodeRef::Ints(const std::string& name, const std::vector<int64_t>& v) {
  auto* a = Attr(node_, name, pb::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
  return *this;
}
OnnxTestModel::NodeRef& OnnxTestModel::NodeRef::Floats(const std::string& name, const std::vector<float>& v) {
  auto* a = Attr(node_, name, pb::AttributeProto::FLOATS);
  for (float x : v) a->add_floats(x);
  return *this;
}
OnnxTestModel::NodeRef& OnnxTestModel::NodeRef::TensorF32(const std::string& name, const std::vector<int64_t>& dims,
                                                          const std::vector<float>& v) {
  auto* t = Attr(node_, name, pb::AttributeProto::TENSOR)->mutable_t();
  t->set_data_type(pb::TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  for (float x : v) t->add_float_data(x);
  return *this;
}
OnnxTestModel::NodeRef& OnnxTestModel::NodeRef::TensorI64(const std::string& name, const std::vector<int64_t>& dims,
                                                          const std::vector<int64_t>& v) {
  auto* t = Attr(node_, name, pb::AttributeProto::TENSOR)->mutable_t();
  t->set_data_type(pb::TensorProto::INT64);
  for (int64_t d : dims) t->add_dims(d);
  for (int64_t x : v) t->add_int64_data(x);
  return *this;
}

OnnxTestModel::NodeRef& OnnxTestModel::NodeRef::Graph(const std::string& name, const OnnxTestModel& body) {
  *Attr(node_, name, pb::AttributeProto::GRAPH)->mutable_g() = body.impl_->model.graph();
  return *this;
}

void OnnxTestModel::Input(const std::string& name, const std::vector<int64_t>& dims, int elem_type) {
  auto* v = impl_->model.mutable_graph()->add_input();
  v->set_name(name);
  auto* tt = v->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem_type);
  auto* shape = tt->mutable_shape();
  for (size_t i = 0; i < dims.size(); ++i) {
    auto* d = shape->add_dim();
    if (dims[i] < 0)
      d->set_dim_param("d" + std::to_string(i));
    else
      d->set_dim_value(dims[i]);
  }
}

void OnnxTestModel::Output(const std::string& name, int elem_type) {
  auto* v = impl_->model.mutable_graph()->add_output();
  v->set_name(name);
  v->mutable_type()->mutable_tensor_type()->set_elem_type(elem_type);
}

void OnnxTestModel::InitF32(const std::string& name, const std::vector<int64_t>& dims,
                            const std::vector<float>& values) {
  auto* t = impl_->model.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(pb::TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  t->set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * 4));
}

void OnnxTestModel::InitF16(const std::string& name, const std::vector<int64_t>& dims,
                            const std::vector<float>& values) {
  auto* t = impl_->model.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(pb::TensorProto::FLOAT16);
  for (int64_t d : dims) t->add_dims(d);
  std::string bytes(values.size() * 2, '\0');
  for (size_t i = 0; i < values.size(); ++i) {
    const uint16_t h = fp16_ieee_from_fp32_value(values[i]);
    std::memcpy(bytes.data() + 2 * i, &h, 2);
  }
  t->set_raw_data(bytes);
}

void OnnxTestModel::InitI64(const std::string& name, const std::vector<int64_t>& dims,
                            const std::vector<int64_t>& values) {
  auto* t = impl_->model.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(pb::TensorProto::INT64);
  for (int64_t d : dims) t->add_dims(d);
  for (int64_t v : values) t->add_int64_data(v);
}

void OnnxTestModel::InitInts(const std::string& name, int elem_type, const std::vector<int64_t>& dims,
                             const std::vector<int32_t>& values) {
  auto* t = impl_->model.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(elem_type);
  for (int64_t d : dims) t->add_dims(d);
  for (int32_t v : values) t->add_int32_data(v);
}

OnnxTestModel::NodeRef OnnxTestModel::Node(const std::string& op_type, const std::vector<std::string>& inputs,
                                           const std::vector<std::string>& outputs, const std::string& domain) {
  auto* n = impl_->model.mutable_graph()->add_node();
  n->set_op_type(op_type);
  n->set_domain(domain);
  n->set_name(op_type + "_" + std::to_string(impl_->model.graph().node_size()));
  for (const auto& i : inputs) n->add_input(i);
  for (const auto& o : outputs) n->add_output(o);
  if (!domain.empty()) {
    bool have = false;
    for (const auto& o : impl_->model.opset_import()) have = have || o.domain() == domain;
    if (!have) {
      auto* o = impl_->model.add_opset_import();
      o->set_domain(domain);
      o->set_version(1);
    }
  }
  return NodeRef(n);
}

void OnnxTestModel::MoveWeightsToExternalData(const std::string& folder, const std::string& location) {
  std::ofstream out(folder + "/" + location, std::ios::binary);
  int64_t offset = 0;
  for (auto& t : *impl_->model.mutable_graph()->mutable_initializer()) {
    std::string bytes = t.raw_data();
    if (bytes.empty()) continue;
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    t.clear_raw_data();
    t.set_data_location(pb::TensorProto::EXTERNAL);
    auto add = [&](const std::string& key, const std::string& value) {
      auto* kv = t.add_external_data();
      kv->set_key(key);
      kv->set_value(value);
    };
    add("location", location);
    add("offset", std::to_string(offset));
    add("length", std::to_string(bytes.size()));
    offset += static_cast<int64_t>(bytes.size());
  }
  if (!out) throw std::runtime_error("cannot write external data");
}

std::string OnnxTestModel::Serialize() const {
  std::string bytes;
  if (!impl_->model.SerializeToString(&bytes)) throw std::runtime_error("cannot serialise the test model");
  return bytes;
}

std::string OnnxTestModel::Write(const std::string& path) const {
  std::ofstream out(path, std::ios::binary);
  const std::string bytes = Serialize();
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path);
  return path;
}

std::vector<float> RandomValues(size_t n, uint32_t seed, float scale) {
  std::vector<float> v(n);
  uint32_t s = seed * 2654435761u + 12345u;
  for (float& x : v) {
    s = s * 1664525u + 1013904223u;
    x = (static_cast<float>(s >> 8) / 16777216.0f * 2.0f - 1.0f) * scale;
  }
  return v;
}

convert::Result ConvertWithoutTarget(const OnnxTestModel& m, const std::string& file, TempDir& dir) {
  convert::Options o;
  o.onnx_path = m.Write(dir.file(file));
  o.target = "none";
  return convert::Convert(o);
}

ir::Tensor* FirstConstInput(ir::Model& m, tfl::BuiltinOperator code, int slot) {
  for (const ir::Op& op : m.main().ops)
    if (op.code == code && slot < static_cast<int>(op.inputs.size()) && op.inputs[slot] >= 0 &&
        m.main().tensors[op.inputs[slot]].is_const())
      return &m.main().tensors[op.inputs[slot]];
  return nullptr;
}

}  // namespace gpuclean::testing
