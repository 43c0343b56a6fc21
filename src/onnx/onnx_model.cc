// ONNX import: the one file that knows protobuf and the ONNX library.
#include "onnx/onnx_model.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>
#include <onnx/version_converter/convert.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gpuclean/error.h"
#include "gpuclean/io.h"
#include "onnx/contrib_ops.h"
#include "onnx/opset_adapt.h"
#include "onnx/proto_edit.h"
#include "onnx/quantized_ops.h"

namespace gpuclean::onnx {
namespace fs = std::filesystem;
namespace pb = ::onnx;

std::string Node::Label() const {
  return name.empty() ? fmt::format("{} #{}", op_type, index) : fmt::format("{} '{}'", op_type, name);
}

namespace {

// Protobuf refuses messages over 2 GiB; larger weights must be external.
constexpr int64_t kMaxProtoBytes = INT_MAX;
// Far beyond any real model; a declared shape past this is hostile.
constexpr int64_t kMaxElements = int64_t{1} << 34;

[[noreturn]] void Bad(const std::string& path, const std::string& what) { ThrowBadInput(OneLine(path + ": " + what)); }

}  // namespace

ir::DType DTypeFromOnnx(int onnx_type, const std::string& what) {
  switch (onnx_type) {
    case pb::TensorProto::FLOAT: return tfl::TensorType_FLOAT32;
    case pb::TensorProto::UINT8: return tfl::TensorType_UINT8;
    case pb::TensorProto::INT8: return tfl::TensorType_INT8;
    case pb::TensorProto::UINT16: return tfl::TensorType_UINT16;
    case pb::TensorProto::INT16: return tfl::TensorType_INT16;
    case pb::TensorProto::INT32: return tfl::TensorType_INT32;
    case pb::TensorProto::INT64: return tfl::TensorType_INT64;
    case pb::TensorProto::BOOL: return tfl::TensorType_BOOL;
    case pb::TensorProto::FLOAT16: return tfl::TensorType_FLOAT16;
    case pb::TensorProto::DOUBLE: return tfl::TensorType_FLOAT64;
    case pb::TensorProto::UINT32: return tfl::TensorType_UINT32;
    case pb::TensorProto::UINT64: return tfl::TensorType_UINT64;
    default: break;
  }
  const std::string name = pb::TensorProto::DataType_IsValid(onnx_type)
                               ? pb::TensorProto::DataType_Name(static_cast<pb::TensorProto::DataType>(onnx_type))
                               : std::to_string(onnx_type);
  ThrowUnsupported(what + " has ONNX data type " + name + ", which gpuclean does not convert");
}

namespace {

int64_t CheckedElements(const std::string& path, const std::string& what,
                        const google::protobuf::RepeatedField<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) Bad(path, what + " has a negative dimension " + std::to_string(d));
    if (d != 0 && n > kMaxElements / d) Bad(path, what + " declares more than 2^34 elements");
    n *= d;
  }
  return n;
}

// Reads external data (location/offset/length) into raw_data. The location
// must stay inside the model's folder: no absolute paths, no "..", no
// symbolic link that leads out.
void LoadExternalData(const std::string& path, pb::TensorProto& t) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& kv : t.external_data()) {
    try {
      if (kv.key() == "location")
        location = kv.value();
      else if (kv.key() == "offset")
        offset = std::stoll(kv.value());
      else if (kv.key() == "length")
        length = std::stoll(kv.value());
    } catch (const std::exception&) {
      Bad(path, "initializer '" + t.name() + "' has a malformed external data " + kv.key() + " '" + kv.value() + "'");
    }
  }
  const std::string what = "initializer '" + t.name() + "'";
  if (location.empty()) Bad(path, what + " is stored externally without a location");
  const fs::path rel(location);
  if (rel.is_absolute()) Bad(path, what + " has an absolute external data location '" + location + "'");
  for (const auto& part : rel)
    if (part == "..")
      Bad(path, what + " has an external data location that leaves the model's folder: '" + location + "'");
  std::error_code ec;
  const fs::path dir = fs::weakly_canonical(fs::absolute(fs::path(path)).parent_path(), ec);
  const fs::path file = fs::weakly_canonical(dir / rel, ec);
  if (ec) Bad(path, what + ": cannot resolve external data '" + location + "'");
  const auto [end, _] = std::mismatch(dir.begin(), dir.end(), file.begin(), file.end());
  if (end != dir.end()) Bad(path, what + "'s external data '" + location + "' resolves outside the model's folder");
  if (!fs::is_regular_file(file, ec)) Bad(path, what + "'s external data file '" + location + "' is missing");
  const int64_t size = static_cast<int64_t>(fs::file_size(file, ec));
  if (offset < 0 || offset > size)
    Bad(path, what + "'s external data offset " + std::to_string(offset) + " is outside '" + location + "'");
  if (length < 0) length = size - offset;
  if (length > size - offset)
    Bad(path, what + "'s external data is short: wants " + std::to_string(length) + " bytes at " +
                  std::to_string(offset) + ", '" + location + "' has " + std::to_string(size));
  std::ifstream in(file, std::ios::binary);
  std::string bytes(static_cast<size_t>(length), '\0');
  in.seekg(offset);
  if (!in.read(bytes.data(), length)) Bad(path, what + ": cannot read external data '" + location + "'");
  t.set_raw_data(std::move(bytes));
  t.clear_external_data();
  t.set_data_location(pb::TensorProto::DEFAULT);
}

template <typename Src, typename Dst>
void CopyTyped(const Src& field, npy::Array& a) {
  Dst* out = a.as<Dst>();
  for (int i = 0; i < field.size(); ++i) out[i] = static_cast<Dst>(field.Get(i));
}

}  // namespace

npy::Array TensorFromProto(const std::string& path, const pb::TensorProto& t) {
  const std::string what = "tensor '" + t.name() + "'";
  npy::Array a;
  a.dtype = DTypeFromOnnx(t.data_type(), what);
  const int64_t n = CheckedElements(path, what, t.dims());
  a.shape.assign(t.dims().begin(), t.dims().end());
  const size_t esize = ir::DTypeSize(a.dtype);
  if (t.data_location() == pb::TensorProto::EXTERNAL) Bad(path, what + " still refers to external data");
  const size_t want = static_cast<size_t>(n) * esize;
  if (t.has_raw_data()) {
    if (t.raw_data().size() != want)
      Bad(path,
          fmt::format("{} holds {} bytes of data for {} elements of {} bytes", what, t.raw_data().size(), n, esize));
    a.data.assign(t.raw_data().begin(), t.raw_data().end());
  } else {
    // Counted before anything is allocated: the dims may claim 2^34 elements.
    auto check = [&](int have) {
      if (have != n) Bad(path, fmt::format("{} holds {} values for {} elements", what, have, n));
      a.data.assign(want, 0);
    };
    switch (a.dtype) {
      case tfl::TensorType_FLOAT32:
        check(t.float_data_size());
        CopyTyped<decltype(t.float_data()), float>(t.float_data(), a);
        break;
      case tfl::TensorType_FLOAT64:
        check(t.double_data_size());
        CopyTyped<decltype(t.double_data()), double>(t.double_data(), a);
        break;
      case tfl::TensorType_INT64:
        check(t.int64_data_size());
        CopyTyped<decltype(t.int64_data()), int64_t>(t.int64_data(), a);
        break;
      case tfl::TensorType_UINT64:
        check(t.uint64_data_size());
        CopyTyped<decltype(t.uint64_data()), uint64_t>(t.uint64_data(), a);
        break;
      case tfl::TensorType_UINT32:
        check(t.uint64_data_size());
        CopyTyped<decltype(t.uint64_data()), uint32_t>(t.uint64_data(), a);
        break;
      case tfl::TensorType_INT32:
        check(t.int32_data_size());
        CopyTyped<decltype(t.int32_data()), int32_t>(t.int32_data(), a);
        break;
      case tfl::TensorType_INT16:
        check(t.int32_data_size());
        CopyTyped<decltype(t.int32_data()), int16_t>(t.int32_data(), a);
        break;
      case tfl::TensorType_UINT16:
      case tfl::TensorType_FLOAT16:
        check(t.int32_data_size());
        CopyTyped<decltype(t.int32_data()), uint16_t>(t.int32_data(), a);
        break;
      case tfl::TensorType_INT8:
        check(t.int32_data_size());
        CopyTyped<decltype(t.int32_data()), int8_t>(t.int32_data(), a);
        break;
      case tfl::TensorType_UINT8:
      case tfl::TensorType_BOOL:
        check(t.int32_data_size());
        CopyTyped<decltype(t.int32_data()), uint8_t>(t.int32_data(), a);
        break;
      default: Bad(path, what + " has an unsupported data type");
    }
  }
  // Double precision is carried as float32 throughout: neither TFLite's GPU
  // delegates nor our kernels compute in it.
  if (a.dtype == tfl::TensorType_FLOAT64) {
    npy::Array f;
    f.dtype = tfl::TensorType_FLOAT32;
    f.shape = a.shape;
    f.data.resize(static_cast<size_t>(n) * 4);
    for (int64_t i = 0; i < n; ++i) f.as<float>()[i] = static_cast<float>(a.as<double>()[i]);
    return f;
  }
  return a;
}

namespace {

Graph SubgraphFromProto(const std::string& path, const pb::GraphProto& graph);

Attribute AttributeFromProto(const std::string& path, const pb::AttributeProto& p) {
  Attribute a;
  switch (p.type()) {
    case pb::AttributeProto::INT:
      a.kind = Attribute::kInt;
      a.i = p.i();
      break;
    case pb::AttributeProto::FLOAT:
      a.kind = Attribute::kFloat;
      a.f = p.f();
      break;
    case pb::AttributeProto::STRING:
      a.kind = Attribute::kString;
      a.s = p.s();
      break;
    case pb::AttributeProto::INTS:
      a.kind = Attribute::kInts;
      a.ints.assign(p.ints().begin(), p.ints().end());
      break;
    case pb::AttributeProto::FLOATS:
      a.kind = Attribute::kFloats;
      a.floats.assign(p.floats().begin(), p.floats().end());
      break;
    case pb::AttributeProto::STRINGS:
      a.kind = Attribute::kStrings;
      a.strings.assign(p.strings().begin(), p.strings().end());
      break;
    case pb::AttributeProto::TENSOR:
      a.kind = Attribute::kTensor;
      a.tensor = TensorFromProto(path, p.t());
      break;
    case pb::AttributeProto::GRAPH:
      a.kind = Attribute::kGraph;
      a.graph = std::make_shared<const Graph>(SubgraphFromProto(path, p.g()));
      break;
    case pb::AttributeProto::GRAPHS: a.kind = Attribute::kGraph; break;
    default: a.kind = Attribute::kOther; break;
  }
  return a;
}

ValueInfo ValueInfoFromProto(const pb::ValueInfoProto& v) {
  ValueInfo info;
  info.name = v.name();
  if (!v.type().has_tensor_type()) return info;
  const auto& tt = v.type().tensor_type();
  try {
    info.dtype = DTypeFromOnnx(tt.elem_type(), "value '" + v.name() + "'");
  } catch (const Error&) {
    info.dtype_known = false;
  }
  if (info.dtype == tfl::TensorType_FLOAT64) info.dtype = tfl::TensorType_FLOAT32;
  if (!tt.has_shape()) return info;
  info.has_shape = true;
  for (const auto& d : tt.shape().dim()) {
    info.shape.push_back(d.has_dim_value() ? d.dim_value() : -1);
    info.dim_params.push_back(d.has_dim_param() ? d.dim_param() : "");
  }
  return info;
}

Node NodeFromProto(const std::string& path, const pb::NodeProto& p, int index) {
  Node n;
  n.index = index;
  n.name = p.name();
  n.op_type = p.op_type();
  n.domain = p.domain() == "ai.onnx" ? "" : p.domain();
  n.inputs.assign(p.input().begin(), p.input().end());
  n.outputs.assign(p.output().begin(), p.output().end());
  for (const auto& a : p.attribute()) n.attributes[a.name()] = AttributeFromProto(path, a);
  return n;
}

// A branch or loop body: its nodes may read any name of the scopes around
// it, which the lowering resolves when it lowers the body in place.
Graph SubgraphFromProto(const std::string& path, const pb::GraphProto& graph) {
  Graph g;
  g.source = path;
  for (const auto& t : graph.initializer()) g.initializers[t.name()] = TensorFromProto(path, t);
  for (const auto& v : graph.input())
    if (!g.initializers.count(v.name())) g.inputs.push_back(ValueInfoFromProto(v));
  for (const auto& v : graph.output()) g.outputs.push_back(ValueInfoFromProto(v));
  for (const auto& v : graph.value_info()) g.value_info[v.name()] = ValueInfoFromProto(v);
  for (int i = 0; i < graph.node_size(); ++i) g.nodes.push_back(NodeFromProto(path, graph.node(i), i));
  return g;
}

pb::ModelProto ParseBytes(const std::string& bytes, const std::string& source) {
  if (static_cast<int64_t>(bytes.size()) > kMaxProtoBytes)
    Bad(source, "over 2 GiB; store the weights as external data");
  pb::ModelProto model;
  google::protobuf::io::ArrayInputStream raw(bytes.data(), static_cast<int>(bytes.size()));
  google::protobuf::io::CodedInputStream coded(&raw);
  coded.SetTotalBytesLimit(INT_MAX);
  coded.SetRecursionLimit(64);
  if (!model.ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage())
    Bad(source, "not an ONNX model (the protobuf does not parse; truncated or another format?)");
  if (!model.has_graph() || model.ir_version() <= 0) Bad(source, "not an ONNX model (no graph or IR version)");
  return model;
}

pb::ModelProto Parse(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) ThrowBadInput(path + ": no such file");
  if (fs::is_directory(path, ec)) ThrowBadInput(path + ": is a folder, not an ONNX model");
  const auto size = fs::file_size(path, ec);
  if (ec) ThrowBadInput(path + ": cannot read the file");
  if (static_cast<int64_t>(size) > kMaxProtoBytes) Bad(path, "over 2 GiB; store the weights as external data");
  std::ifstream in(path, std::ios::binary);
  std::string bytes(size, '\0');
  if (!in.read(bytes.data(), static_cast<std::streamsize>(size))) ThrowBadInput(path + ": cannot read the file");
  return ParseBytes(bytes, path);
}

int64_t DefaultOpset(const std::string& path, const pb::ModelProto& model) {
  int64_t opset = -1;
  for (const auto& o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") opset = o.version();
  if (opset < 0) Bad(path, "imports no version of the default ONNX operator set");
  return opset;
}

void RefuseForeignDomains(const std::string& path, const pb::GraphProto& graph) {
  std::map<std::string, std::pair<int, std::string>> foreign;
  for (const auto& n : graph.node()) {
    if (n.domain().empty() || n.domain() == "ai.onnx" || IsExpandedContribOp(n.domain(), n.op_type()) ||
        IsExpandedQuantizedOp(n.domain(), n.op_type()))
      continue;
    auto& [count, first] = foreign[n.domain()];
    if (count++ == 0) first = n.op_type() + (n.name().empty() ? "" : " '" + n.name() + "'");
  }
  if (foreign.empty()) return;
  std::string list;
  for (const auto& [domain, c] : foreign)
    list += (list.empty() ? "" : "; ") + fmt::format("{} ({} node(s), first {})", domain, c.first, c.second);
  ThrowUnsupported(OneLine(path + ": ops from operator domains gpuclean does not convert: " + list));
}

// Names a nested graph (If/Loop/Scan body) reads from the scope around it:
// its node's implicit inputs, which order it as much as its real ones.
void OuterReads(const pb::GraphProto& g, std::set<std::string>& reads) {
  std::set<std::string> local;
  for (const auto& v : g.input()) local.insert(v.name());
  for (const auto& t : g.initializer()) local.insert(t.name());
  for (const auto& n : g.node()) {
    for (const auto& in : n.input())
      if (!in.empty() && !local.count(in)) reads.insert(in);
    for (const auto& a : n.attribute()) {
      std::set<std::string> inner;
      if (a.has_g()) OuterReads(a.g(), inner);
      for (const auto& sub : a.graphs()) OuterReads(sub, inner);
      for (const auto& name : inner)
        if (!local.count(name)) reads.insert(name);
    }
    for (const auto& out : n.output()) local.insert(out);
  }
}

// Orders the nodes so that each comes after the producers of what it reads,
// keeping the file's order among nodes that are free to go (Kahn's algorithm
// taking the earliest ready node first). ONNX requires this order and
// onnxruntime sorts for itself; some exporters (PyTorch 2.0 with fp16 Casts)
// write nodes out of it. A read nothing defines is left for CheckDataflow to
// name; a cycle is refused here, naming a node on it.
void SortTopologically(const std::string& path, pb::GraphProto& graph) {
  const int count = graph.node_size();
  std::map<std::string, int> producer;
  for (int i = 0; i < count; ++i)
    for (const auto& out : graph.node(i).output())
      if (!out.empty()) producer.emplace(out, i);
  std::vector<std::vector<int>> readers(count);
  std::vector<int> waiting(count, 0);
  bool sorted = true;
  for (int i = 0; i < count; ++i) {
    const auto& n = graph.node(i);
    std::set<std::string> reads(n.input().begin(), n.input().end());
    for (const auto& a : n.attribute()) {
      if (a.has_g()) OuterReads(a.g(), reads);
      for (const auto& sub : a.graphs()) OuterReads(sub, reads);
    }
    std::set<int> from;
    for (const auto& name : reads) {
      auto it = name.empty() ? producer.end() : producer.find(name);
      if (it == producer.end() || it->second == i) continue;
      from.insert(it->second);
    }
    for (int p : from) {
      readers[p].push_back(i);
      ++waiting[i];
      sorted = sorted && p < i;
    }
  }
  if (sorted) return;
  std::set<int> ready;
  for (int i = 0; i < count; ++i)
    if (waiting[i] == 0) ready.insert(i);
  std::vector<int> order;
  order.reserve(count);
  while (!ready.empty()) {
    const int i = *ready.begin();
    ready.erase(ready.begin());
    order.push_back(i);
    for (int r : readers[i])
      if (--waiting[r] == 0) ready.insert(r);
  }
  if (static_cast<int>(order.size()) != count) {
    for (int i = 0; i < count; ++i)
      if (waiting[i] > 0) {
        const auto& n = graph.node(i);
        Bad(path, fmt::format("the graph has a cycle: {} depends on its own output",
                              n.name().empty() ? fmt::format("{} #{}", n.op_type(), i)
                                               : fmt::format("{} '{}'", n.op_type(), n.name())));
      }
  }
  google::protobuf::RepeatedPtrField<pb::NodeProto> nodes;
  for (int i : order) nodes.Add()->Swap(graph.mutable_node(i));
  graph.mutable_node()->Swap(&nodes);
}

// After sorting, every node reads only tensors defined before it, and every graph output is
// defined. Checked before libonnx sees the graph: its opset converter
// dereferences what it does not find (a dangling graph output crashed it).
// Initializer dims are checked here too: libonnx's checker multiplies them
// unchecked (2^40 x 2^40 wrapped to "0-element").
void CheckDataflow(const std::string& path, const pb::GraphProto& graph) {
  // Every value is defined once (onnxruntime refuses a second definition;
  // libonnx's inference reads the wrong one and crashed on it). An
  // initializer may also be listed as a graph input (IR < 4 requires it).
  std::set<std::string> defined;
  for (const auto& v : graph.input())
    if (!defined.insert(v.name()).second) Bad(path, "graph input '" + v.name() + "' is declared twice");
  std::set<std::string> initializers;
  for (const auto& t : graph.initializer()) {
    CheckedElements(path, "initializer '" + t.name() + "'", t.dims());
    if (!initializers.insert(t.name()).second) Bad(path, "initializer '" + t.name() + "' is declared twice");
    defined.insert(t.name());
  }
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto& n = graph.node(i);
    const std::string label =
        n.name().empty() ? fmt::format("{} #{}", n.op_type(), i) : fmt::format("{} '{}'", n.op_type(), n.name());
    for (const auto& in : n.input())
      if (!in.empty() && !defined.count(in))
        Bad(path, label + " reads '" + in + "', which no node, input or initializer defines");
    for (const auto& out : n.output())
      if (!out.empty() && !defined.insert(out).second)
        Bad(path, label + " defines '" + out + "', which is already defined");
  }
  for (const auto& v : graph.output())
    if (!defined.count(v.name())) Bad(path, "graph output '" + v.name() + "' is produced by no node");
}

// Window and block attributes libonnx's shape inference divides by (a stride
// of 0 raised SIGFPE inside convPoolShapeInference) or sizes from. Checked by
// attribute name, for every op and every nested graph, before libonnx sees them.
void CheckInferenceAttributes(const std::string& path, const pb::GraphProto& graph) {
  struct Rule {
    const char* name;
    int64_t min;
  };
  static constexpr Rule kRules[] = {{"strides", 1},        {"dilations", 1},    {"kernel_shape", 1},
                                    {"blocksize", 1},      {"group", 1},        {"pads", 0},
                                    {"output_padding", 0}, {"output_shape", 0}, {"size", 1}};
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto& n = graph.node(i);
    for (const auto& a : n.attribute()) {
      if (a.has_g()) CheckInferenceAttributes(path, a.g());
      for (const auto& g : a.graphs()) CheckInferenceAttributes(path, g);
      for (const auto& rule : kRules) {
        if (a.name() != rule.name) continue;
        const bool bad = (a.type() == pb::AttributeProto::INT && a.i() < rule.min) ||
                         std::any_of(a.ints().begin(), a.ints().end(), [&](int64_t v) { return v < rule.min; });
        if (bad) {
          const std::string label =
              n.name().empty() ? fmt::format("{} #{}", n.op_type(), i) : fmt::format("{} '{}'", n.op_type(), n.name());
          Bad(path, fmt::format("{}: attribute {} must be {} (got {})", label, rule.name,
                                rule.min == 0 ? "non-negative" : "at least 1",
                                a.type() == pb::AttributeProto::INT ? std::to_string(a.i())
                                                                    : fmt::format("{}", fmt::join(a.ints(), ","))));
        }
      }
    }
  }
}

// libonnx's Conv inference, without a kernel_shape attribute, takes the
// window from the weight's shape and then indexes per-axis vectors sized by
// the input's rank: a weight of another rank read past them (a null read
// found by the ONNX import fuzzer). Where the weight's shape is declared, its
// window is written as kernel_shape, which the same inference checks against
// the input's rank and refuses in a message.
void MakeKernelShapesExplicit(pb::GraphProto& graph) {
  std::map<std::string, const google::protobuf::RepeatedPtrField<pb::TensorShapeProto_Dimension>*> declared;
  std::map<std::string, std::vector<int64_t>> initializer_dims;
  for (const auto* list : {&graph.input(), &graph.value_info()})
    for (const auto& v : *list)
      if (v.type().has_tensor_type() && v.type().tensor_type().has_shape())
        declared[v.name()] = &v.type().tensor_type().shape().dim();
  for (const auto& t : graph.initializer()) initializer_dims[t.name()] = {t.dims().begin(), t.dims().end()};
  const auto weight_window = [&](const std::string& name) -> std::optional<std::vector<int64_t>> {
    std::vector<int64_t> dims;
    if (const auto it = initializer_dims.find(name); it != initializer_dims.end()) {
      dims = it->second;
    } else if (const auto d = declared.find(name); d != declared.end()) {
      for (const auto& dim : *d->second) {
        if (!dim.has_dim_value()) return std::nullopt;
        dims.push_back(dim.dim_value());
      }
    } else {
      return std::nullopt;
    }
    if (dims.size() < 3 || std::any_of(dims.begin() + 2, dims.end(), [](int64_t v) { return v < 1; }))
      return std::nullopt;
    return std::vector<int64_t>(dims.begin() + 2, dims.end());
  };
  // The weight's input index in each standard op whose inference reads it.
  static const std::map<std::string, int> kWeightInput = {{"Conv", 1}, {"ConvInteger", 1}, {"QLinearConv", 3}};
  for (auto& n : *graph.mutable_node()) {
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_g()) MakeKernelShapesExplicit(*a.mutable_g());
      for (auto& g : *a.mutable_graphs()) MakeKernelShapesExplicit(g);
    }
    const auto op = kWeightInput.find(n.op_type());
    if (!n.domain().empty() || op == kWeightInput.end() || n.input_size() <= op->second) continue;
    if (std::any_of(n.attribute().begin(), n.attribute().end(),
                    [](const auto& a) { return a.name() == "kernel_shape"; }))
      continue;
    const auto window = weight_window(n.input(op->second));
    if (!window) continue;
    auto* attr = n.add_attribute();
    attr->set_name("kernel_shape");
    attr->set_type(pb::AttributeProto::INTS);
    for (const int64_t v : *window) attr->add_ints(v);
  }
}

[[noreturn]] void ThrowError(const std::string& path, const pb::ValueInfoProto& input, const Dims& dims, int rank) {
  throw Error(ErrorKind::kUsage, fmt::format("--input-shape {}: gives {} dimensions, the input has rank {} ({})",
                                             input.name(), dims.size(), rank, path));
}

void PinInputShapes(const std::string& path, pb::GraphProto& graph, const ImportOptions& options) {
  std::set<std::string> initializer_names;
  for (const auto& t : graph.initializer()) initializer_names.insert(t.name());
  std::set<std::string> used;
  std::vector<std::string> unknown;
  for (auto& input : *graph.mutable_input()) {
    if (initializer_names.count(input.name())) continue;
    auto it = options.input_shapes.find(input.name());
    if (!input.type().has_tensor_type()) Bad(path, "graph input '" + input.name() + "' is not a tensor");
    auto* tt = input.mutable_type()->mutable_tensor_type();
    if (it != options.input_shapes.end()) {
      used.insert(it->first);
      const Dims& dims = it->second;
      if (tt->has_shape() && tt->shape().dim_size() != static_cast<int>(dims.size()))
        ThrowError(path, input, dims, tt->shape().dim_size());
      auto* shape = tt->mutable_shape();
      for (int i = 0; i < static_cast<int>(dims.size()); ++i) {
        if (i < shape->dim_size()) {
          auto* d = shape->mutable_dim(i);
          if (d->has_dim_value() && d->dim_value() != dims[i])
            throw Error(ErrorKind::kUsage,
                        fmt::format("--input-shape {}: dimension {} is fixed at {} in the model, not {}", input.name(),
                                    i, d->dim_value(), dims[i]));
          d->set_dim_value(dims[i]);
        } else {
          shape->add_dim()->set_dim_value(dims[i]);
        }
      }
      continue;
    }
    if (options.input_values.count(input.name())) continue;  // PinInputValues checks its shape
    if (!tt->has_shape()) {
      unknown.push_back(input.name() + " (no shape)");
      continue;
    }
    std::string dims;
    bool dynamic = false;
    for (const auto& d : tt->shape().dim()) {
      dims += (dims.empty() ? "" : ",");
      if (d.has_dim_value() && d.dim_value() >= 0)
        dims += std::to_string(d.dim_value());
      else {
        dims += d.has_dim_param() && !d.dim_param().empty() ? d.dim_param() : "?";
        dynamic = true;
      }
    }
    if (dynamic) unknown.push_back(input.name() + " [" + dims + "]");
  }
  for (const auto& [name, _] : options.input_shapes)
    if (!used.count(name))
      throw Error(ErrorKind::kUsage, "--input-shape names '" + name + "', which is not a graph input of " + path);
  if (!unknown.empty()) {
    std::string list;
    for (const auto& u : unknown) list += (list.empty() ? "" : "; ") + u;
    ThrowUnsupported(OneLine(path + ": graph inputs with unknown dimensions: " + list +
                             "; pin them with --input-shape NAME=d0,d1,..."));
  }
}

// --input-value: each named input becomes an initializer holding the given
// values in its declared element type and shape, so that whatever depends on
// it (an If on the sample rate) folds at convert time. Returns the pins, in
// ONNX dtypes, for the runs of the original model.
std::vector<std::pair<std::string, npy::Array>> PinInputValues(const std::string& path, pb::GraphProto& graph,
                                                               const ImportOptions& options) {
  std::vector<std::pair<std::string, npy::Array>> pinned;
  std::set<std::string> initializer_names;
  for (const auto& t : graph.initializer()) initializer_names.insert(t.name());
  for (const auto& pin : options.input_values) {
    // Named, not a structured binding: clang 14 cannot capture those in lambdas.
    const std::string& name = pin.first;
    const std::vector<double>& values = pin.second;
    auto* inputs = graph.mutable_input();
    auto it =
        std::find_if(inputs->begin(), inputs->end(), [&](const pb::ValueInfoProto& v) { return v.name() == name; });
    if (it == inputs->end() || initializer_names.count(name))
      throw Error(ErrorKind::kUsage, "--input-value names '" + name + "', which is not a graph input of " + path);
    const auto& tt = it->type().tensor_type();
    pb::TensorProto t;
    t.set_name(name);
    t.set_data_type(tt.elem_type());
    int64_t count = 1;
    for (const auto& d : tt.shape().dim()) {
      if (!d.has_dim_value())
        throw Error(
            ErrorKind::kUsage,
            "--input-value " + name + ": the input has an unknown dimension; give its shape with --input-shape too");
      t.add_dims(d.dim_value());
      count *= d.dim_value();
    }
    if (static_cast<int64_t>(values.size()) != count)
      throw Error(ErrorKind::kUsage,
                  fmt::format("--input-value {}: {} value(s) given, the input holds {}", name, values.size(), count));
    for (double v : values) {
      switch (tt.elem_type()) {
        case pb::TensorProto::FLOAT: t.add_float_data(static_cast<float>(v)); break;
        case pb::TensorProto::DOUBLE: t.add_double_data(v); break;
        case pb::TensorProto::INT64: t.add_int64_data(static_cast<int64_t>(v)); break;
        case pb::TensorProto::INT32:
        case pb::TensorProto::INT8:
        case pb::TensorProto::UINT8:
        case pb::TensorProto::INT16:
        case pb::TensorProto::BOOL: t.add_int32_data(static_cast<int32_t>(v)); break;
        default:
          throw Error(ErrorKind::kUsage, "--input-value " + name + ": inputs of type " + OnnxTypeName(tt.elem_type()) +
                                             " cannot be pinned");
      }
    }
    pinned.emplace_back(name, TensorFromProto(path, t));
    *graph.add_initializer() = std::move(t);
    inputs->erase(it);
  }
  return pinned;
}

void InferShapesOrThrow(const std::string& path, pb::ModelProto& model) {
  try {
    pb::ShapeInferenceOptions shape_options(/*check_type=*/false, /*error_mode=*/0, /*data_prop=*/true);
    pb::shape_inference::InferShapes(model, pb::OpSchemaRegistry::Instance(), shape_options);
  } catch (const std::exception& e) {
    Bad(path, std::string("ONNX shape inference fails: ") + e.what());
  }
}

}  // namespace

namespace {

// libonnx's opset 6 -> 7 Gemm adapter indexes A's and B's shapes without
// looking (a null read on a rank-1 or unknown shape; found by the ONNX import
// fuzzer): such a Gemm is refused here, in one line, before the converter runs.
// `unknown_ok`: before shape inference, only shapes the file declares are
// checked (inference itself read a declared rank-0 B; a fuzz find).
void CheckLegacyGemmShapes(const std::string& path, int64_t opset, const pb::GraphProto& graph, bool unknown_ok) {
  std::map<std::string, int> ranks;  // known ranks by value name
  const auto note = [&](const pb::ValueInfoProto& v) {
    if (v.type().has_tensor_type() && v.type().tensor_type().has_shape())
      ranks[v.name()] = v.type().tensor_type().shape().dim_size();
  };
  for (const auto& v : graph.input()) note(v);
  for (const auto& v : graph.value_info()) note(v);
  for (const auto& v : graph.output()) note(v);
  for (const auto& t : graph.initializer()) ranks[t.name()] = t.dims_size();
  for (const auto& node : graph.node()) {
    if (node.op_type() != "Gemm" || !node.domain().empty()) continue;
    for (int i = 0; i < 2; ++i) {
      const std::string input = i < node.input_size() ? node.input(i) : "";
      const auto it = ranks.find(input);
      if (unknown_ok && it == ranks.end()) continue;
      if (it == ranks.end() || it->second != 2)
        ThrowUnsupported(OneLine(fmt::format(
            "{}: Gemm '{}' at opset {}: its {} ('{}') needs a known rank-2 shape to be brought to opset 7 ({})", path,
            node.name(), opset, i == 0 ? "A" : "B", input,
            it == ranks.end() ? "no shape known" : fmt::format("rank {}", it->second))));
    }
  }
}

// Import and ImportBytes from the parsed model on. `path` names the source in
// messages; external data is read relative to it only when `external` is set.
Graph ImportModel(pb::ModelProto model, const std::string& path, const ImportOptions& options, bool external) {
  const int64_t opset = DefaultOpset(path, model);
  RefuseForeignDomains(path, model.graph());
  if (opset < kMinOpset || opset > kMaxOpset)
    ThrowUnsupported(fmt::format("{}: opset {} is outside the opsets gpuclean converts ({}..{})", path, opset,
                                 kMinOpset, kMaxOpset));
  const auto load = [&](pb::TensorProto& t) {
    if (t.data_location() != pb::TensorProto::EXTERNAL) return;
    if (!external)
      Bad(path, "tensor '" + t.name() + "' is stored externally, which a model given as bytes cannot have");
    LoadExternalData(path, t);
  };
  for (auto& t : *model.mutable_graph()->mutable_initializer()) load(t);
  for (auto& n : *model.mutable_graph()->mutable_node())
    for (auto& a : *n.mutable_attribute())
      if (a.has_t()) load(*a.mutable_t());
  std::set<std::string> file_values;
  for (const auto& n : model.graph().node())
    for (const auto& out : n.output())
      if (!out.empty()) file_values.insert(out);
  SortTopologically(path, *model.mutable_graph());
  CheckDataflow(path, model.graph());
  CheckInferenceAttributes(path, model.graph());
  MakeKernelShapesExplicit(*model.mutable_graph());
  PinInputShapes(path, *model.mutable_graph(), options);
  auto pinned = PinInputValues(path, *model.mutable_graph(), options);
  if (opset < kFirstAdaptedOpset) {
    // Before opset 7 broadcasting was explicit (broadcast/axis attributes):
    // libonnx's converter brings such models to 7, ours takes it from there.
    CheckLegacyGemmShapes(path, opset, model.graph(), /*unknown_ok=*/true);
    InferShapesOrThrow(path, model);
    CheckLegacyGemmShapes(path, opset, model.graph(), /*unknown_ok=*/false);
    try {
      pb::checker::check_model(model);
      model = pb::version_conversion::ConvertVersion(model, kFirstAdaptedOpset);
    } catch (const std::exception& e) {
      ThrowUnsupported(
          OneLine(fmt::format("{}: cannot convert opset {} to {}: {}", path, opset, kFirstAdaptedOpset, e.what())));
    }
  }
  AdaptToCanonicalOpset(model, std::max<int64_t>(opset, kFirstAdaptedOpset), path);
  ExpandContribOps(model, path);
  const int quantized_nodes = ExpandQuantizedOps(model, path);
  // Inference first: it fills graph output types that some exporters leave
  // without a shape, which the checker would otherwise refuse.
  InferShapesOrThrow(path, model);
  // The checker wants a shape on every graph output; one that inference
  // could not follow (a Reshape to a computed shape) the lowering finds
  // itself. Marked for the checker only.
  std::vector<pb::TypeProto_Tensor*> shapeless;
  for (auto& v : *model.mutable_graph()->mutable_output())
    if (v.type().has_tensor_type() && !v.type().tensor_type().has_shape())
      shapeless.push_back(v.mutable_type()->mutable_tensor_type());
  for (auto* t : shapeless) t->mutable_shape();
  try {
    pb::checker::check_model(model);
  } catch (const std::exception& e) {
    Bad(path, std::string("fails the ONNX checker: ") + e.what());
  }
  for (auto* t : shapeless) t->clear_shape();

  Graph g;
  g.source = path;
  g.opset = DefaultOpset(path, model);
  g.original_opset = opset;
  g.pinned_inputs = std::move(pinned);
  g.file_values = std::move(file_values);
  g.quantized_nodes = quantized_nodes;
  g.producer = model.producer_name() + (model.producer_version().empty() ? "" : " " + model.producer_version());
  const auto& graph = model.graph();
  // Each initializer's protobuf bytes are released once copied, so the
  // weights are held once, not twice.
  for (auto& t : *model.mutable_graph()->mutable_initializer()) {
    g.initializers[t.name()] = TensorFromProto(path, t);
    std::string().swap(*t.mutable_raw_data());
    t.Clear();
  }
  for (const auto& v : graph.input())
    if (!g.initializers.count(v.name())) g.inputs.push_back(ValueInfoFromProto(v));
  for (const auto& v : graph.output()) g.outputs.push_back(ValueInfoFromProto(v));
  for (const auto& v : graph.value_info()) g.value_info[v.name()] = ValueInfoFromProto(v);
  for (const auto& v : graph.output()) g.value_info[v.name()] = ValueInfoFromProto(v);
  std::set<std::string> defined;
  for (const auto& v : g.inputs) defined.insert(v.name);
  for (const auto& [name, _] : g.initializers) defined.insert(name);
  for (int i = 0; i < graph.node_size(); ++i) {
    Node n = NodeFromProto(path, graph.node(i), i);
    for (const auto& in : n.inputs)
      if (!in.empty() && !defined.count(in))
        Bad(path, n.Label() + " reads '" + in + "' before anything defines it (a cycle or a missing tensor)");
    for (const auto& out : n.outputs) defined.insert(out);
    g.nodes.push_back(std::move(n));
  }
  for (const auto& v : g.outputs)
    if (!defined.count(v.name)) Bad(path, "graph output '" + v.name + "' is produced by no node");
  return g;
}

}  // namespace

Graph Import(const std::string& path, const ImportOptions& options) {
  return ImportModel(Parse(path), path, options, /*external=*/true);
}

Graph ImportBytes(const std::string& bytes, const std::string& source, const ImportOptions& options) {
  return ImportModel(ParseBytes(bytes, source), source, options, /*external=*/false);
}

std::string OnnxTypeName(int onnx_type) {
  if (!pb::TensorProto::DataType_IsValid(onnx_type)) return std::to_string(onnx_type);
  return pb::TensorProto::DataType_Name(static_cast<pb::TensorProto::DataType>(onnx_type));
}

npy::Array ReadTensorProto(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) ThrowBadInput(path + ": no such file");
  const auto size = fs::file_size(path, ec);
  if (ec || static_cast<int64_t>(size) > kMaxProtoBytes) ThrowBadInput(path + ": cannot read the file (or over 2 GiB)");
  std::ifstream in(path, std::ios::binary);
  std::string bytes(size, '\0');
  if (!in.read(bytes.data(), static_cast<std::streamsize>(size))) ThrowBadInput(path + ": cannot read the file");
  pb::TensorProto t;
  google::protobuf::io::ArrayInputStream raw(bytes.data(), static_cast<int>(bytes.size()));
  google::protobuf::io::CodedInputStream coded(&raw);
  coded.SetTotalBytesLimit(INT_MAX);
  if (!t.ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage()) Bad(path, "not a serialised ONNX TensorProto");
  if (t.data_location() == pb::TensorProto::EXTERNAL) Bad(path, "the tensor refers to external data");
  return TensorFromProto(path, t);
}

ModelSummary Summarize(const std::string& path) {
  const pb::ModelProto model = Parse(path);
  ModelSummary s;
  for (const auto& o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") s.opset = o.version();
  std::set<std::string> initializer_names;
  for (const auto& t : model.graph().initializer()) initializer_names.insert(t.name());
  for (const auto& n : model.graph().node())
    s.op_types.push_back(n.domain().empty() || n.domain() == "ai.onnx" ? n.op_type() : n.domain() + ":" + n.op_type());
  auto elem = [](const pb::ValueInfoProto& v) {
    return v.type().has_tensor_type() ? v.type().tensor_type().elem_type() : 0;
  };
  for (const auto& v : model.graph().input())
    if (!initializer_names.count(v.name())) s.input_types.push_back(elem(v));
  for (const auto& v : model.graph().output()) s.output_types.push_back(elem(v));
  return s;
}

void WriteWithOutputs(const std::string& path, const std::vector<std::string>& names, const std::string& out_path) {
  pb::ModelProto model = Parse(path);
  for (auto& t : *model.mutable_graph()->mutable_initializer())
    if (t.data_location() == pb::TensorProto::EXTERNAL) LoadExternalData(path, t);
  try {
    pb::shape_inference::InferShapes(model, pb::OpSchemaRegistry::Instance(),
                                     pb::ShapeInferenceOptions(false, 0, true));
  } catch (const std::exception&) {
    // Outputs without inferred types are skipped below.
  }
  std::map<std::string, const pb::ValueInfoProto*> infos;
  for (const auto& v : model.graph().value_info()) infos[v.name()] = &v;
  std::set<std::string> existing;
  for (const auto& v : model.graph().output()) existing.insert(v.name());
  std::vector<pb::ValueInfoProto> extra;
  for (const auto& name : names) {
    if (existing.count(name)) continue;
    auto it = infos.find(name);
    if (it == infos.end()) continue;
    extra.push_back(*it->second);
    existing.insert(name);
  }
  for (auto& v : extra) *model.mutable_graph()->add_output() = std::move(v);
  std::string bytes;
  if (!model.SerializeToString(&bytes)) ThrowInternal("cannot serialise the ONNX model with extra outputs");
  WriteFileAtomically(out_path, bytes);
}

}  // namespace gpuclean::onnx
