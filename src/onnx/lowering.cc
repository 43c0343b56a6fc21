#include "onnx/lowering.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <memory>
#include <numeric>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gpuclean/error.h"
#include "gpuclean/exec.h"
#include "gpuclean/half.h"
#include "gpuclean/op_table.h"
#include "onnx/fold_activations.h"
#include "onnx/fold_bias.h"
#include "onnx/fold_channel_scale.h"
#include "onnx/fuse_gelu.h"

namespace gpuclean::onnx {

const Perm kToNhwc = {0, 2, 3, 1};
const Perm kToNdhwc = {0, 2, 3, 4, 1};

Perm IdentityPerm(int rank) {
  Perm p(rank);
  std::iota(p.begin(), p.end(), 0);
  return p;
}

bool IsIdentity(const Perm& perm) {
  for (int i = 0; i < static_cast<int>(perm.size()); ++i)
    if (perm[i] != i) return false;
  return true;
}

Perm InversePerm(const Perm& perm) {
  Perm inv(perm.size());
  for (int i = 0; i < static_cast<int>(perm.size()); ++i) inv[perm[i]] = i;
  return inv;
}

Perm RelativePerm(const Perm& from, const Perm& to) {
  // stored_to[i] = onnx[to[i]] = stored_from[inv_from[to[i]]].
  const int rank = static_cast<int>(std::max(from.size(), to.size()));
  const Perm f = from.empty() ? IdentityPerm(rank) : from;
  const Perm t = to.empty() ? IdentityPerm(rank) : to;
  const Perm inv = InversePerm(f);
  Perm rel(t.size());
  for (size_t i = 0; i < t.size(); ++i) rel[i] = inv[t[i]];
  return rel;
}

int StoredAxis(const Perm& perm, int onnx_axis) {
  if (perm.empty()) return onnx_axis;
  for (int i = 0; i < static_cast<int>(perm.size()); ++i)
    if (perm[i] == onnx_axis) return i;
  ThrowInternal(fmt::format("axis {} not in layout [{}]", onnx_axis, fmt::join(perm, ",")));
}

Dims PermuteDims(const Dims& dims, const Perm& perm) {
  if (perm.empty()) return dims;
  Dims out(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) out[i] = dims.at(perm[i]);
  return out;
}

npy::Array TransposeHost(const npy::Array& a, const Perm& perm) {
  if (perm.empty() || IsIdentity(perm)) return a;
  const int rank = static_cast<int>(a.shape.size());
  npy::Array out;
  out.dtype = a.dtype;
  out.shape = PermuteDims(a.shape, perm);
  out.data.resize(a.data.size());
  const size_t esize = ir::DTypeSize(a.dtype);
  std::vector<int64_t> in_strides(rank, 1);
  for (int i = rank - 2; i >= 0; --i) in_strides[i] = in_strides[i + 1] * a.shape[i + 1];
  const int64_t n = a.num_elements();
  std::vector<int64_t> idx(rank, 0);
  for (int64_t o = 0; o < n; ++o) {
    int64_t src = 0;
    for (int i = 0; i < rank; ++i) src += idx[i] * in_strides[perm[i]];
    std::memcpy(out.data.data() + o * esize, a.data.data() + src * esize, esize);
    for (int i = rank - 1; i >= 0; --i) {
      if (++idx[i] < out.shape[i]) break;
      idx[i] = 0;
    }
  }
  return out;
}

int NormalizeAxis(int64_t axis, int rank, const std::string& what) {
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) ThrowBadInput(fmt::format("{}: axis {} is out of range for rank {}", what, axis, rank));
  return static_cast<int>(a);
}

namespace {

ir::DType StoredDType(ir::DType onnx_dtype) {
  switch (onnx_dtype) {
    case tfl::TensorType_INT64:
    case tfl::TensorType_UINT64:
    case tfl::TensorType_UINT32: return tfl::TensorType_INT32;
    case tfl::TensorType_FLOAT16:
    case tfl::TensorType_FLOAT64: return tfl::TensorType_FLOAT32;
    default: return onnx_dtype;
  }
}

std::vector<int32_t> ToShape32(const Dims& dims, const std::string& what) {
  std::vector<int32_t> out;
  for (int64_t d : dims) {
    if (d < 0 || d > INT32_MAX) ThrowUnsupported(fmt::format("{}: dimension {} does not fit the format", what, d));
    out.push_back(static_cast<int32_t>(d));
  }
  return out;
}

// A constant in the dtype the graph stores it in. int64 values must fit
// int32 (checked) except in scratch graphs, where they saturate.
npy::Array ToStored(const npy::Array& a, bool saturate, const std::string& name) {
  const ir::DType want = StoredDType(a.dtype);
  if (want == a.dtype) return a;
  npy::Array out;
  out.dtype = want;
  out.shape = a.shape;
  const int64_t n = a.num_elements();
  out.data.resize(static_cast<size_t>(n) * ir::DTypeSize(want));
  for (int64_t i = 0; i < n; ++i) {
    if (want == tfl::TensorType_FLOAT32) {
      if (a.dtype == tfl::TensorType_FLOAT16) {
        out.as<float>()[i] = HalfToFloat(a.as<uint16_t>()[i]);
      } else {
        out.as<float>()[i] = static_cast<float>(a.as<double>()[i]);
      }
      continue;
    }
    int64_t v = a.dtype == tfl::TensorType_INT64 ? a.as<int64_t>()[i]
                : a.dtype == tfl::TensorType_UINT32
                    ? static_cast<int64_t>(a.as<uint32_t>()[i])
                    : static_cast<int64_t>(std::min<uint64_t>(a.as<uint64_t>()[i], INT64_MAX));
    if (v > INT32_MAX || v < INT32_MIN) {
      if (!saturate)
        ThrowUnsupported(
            fmt::format("constant '{}' holds {}, which does not fit int32 (TFLite's GPU delegates have no "
                        "int64)",
                        name, v));
      v = std::clamp<int64_t>(v, INT32_MIN, INT32_MAX);
    }
    out.as<int32_t>()[i] = static_cast<int32_t>(v);
  }
  return out;
}

// A float clip [1, C, D, H, W]: a video model's input.
bool IsSingleVideo(const ValueInfo& in) {
  return in.shape.size() == 5 && in.shape[0] == 1 && in.dtype == tfl::TensorType_FLOAT32;
}

std::string LayoutSuffix(const Perm& perm) {
  if (perm.empty() || IsIdentity(perm)) return "";
  if (perm == kToNhwc) return "|nhwc";
  return fmt::format("|perm{}", fmt::join(perm, ""));
}

Perm Normalized(const Perm& perm) { return IsIdentity(perm) ? Perm{} : perm; }

// True when transposing `shape` by `perm` keeps the order of its non-unit
// dimensions, so the data does not move.
bool MovesOnlyUnitDims(const std::vector<int32_t>& shape, const Perm& perm) {
  int last = -1;
  for (int axis : perm) {
    if (shape[axis] == 1) continue;
    if (axis < last) return false;
    last = axis;
  }
  return true;
}

}  // namespace

// ------------------------------------------------------------------ Lowerer

Lowerer::Lowerer(const Graph& graph, const LowerOptions& options, bool scratch)
    : graph_(graph), options_(options), scratch_(scratch), builder_("main") {}

Value& Lowerer::value(const std::string& name) {
  auto it = values_.find(name);
  if (it == values_.end()) ThrowInternal("ONNX value '" + name + "' was used before it was lowered");
  return it->second;
}

int Lowerer::Materialize(Value& v, const Perm& wanted) {
  const Perm perm = Normalized(wanted);
  if (auto it = v.layouts.find(perm); it != v.layouts.end()) return it->second;
  int t;
  if (v.constant) {
    if (v.constant->num_elements() == 0)
      ThrowUnsupported(fmt::format("{}: '{}' is an empty tensor (shape [{}]); the format cannot store empty tensors",
                                   graph_.source, v.name, fmt::join(v.constant->shape, ",")));
    npy::Array stored = TransposeHost(ToStored(*v.constant, scratch_, v.name), perm);
    const std::string name = v.name + LayoutSuffix(perm);
    const auto shape = ToShape32(stored.shape, "constant '" + v.name + "'");
    t = builder_.Const(name, stored.dtype, shape, Bytes::Own(std::move(stored.data)));
  } else {
    if (v.tensor < 0) ThrowInternal("ONNX value '" + v.name + "' has no tensor");
    const Perm rel = RelativePerm(v.perm, perm);
    const auto& stored = builder_.tensor(v.tensor).shape;
    if (IsIdentity(rel)) {
      t = v.tensor;
    } else if (MovesOnlyUnitDims(stored, rel)) {
      // Same element order: a reshape, which every delegate runs for free.
      std::vector<int32_t> shape(rel.size());
      for (size_t i = 0; i < rel.size(); ++i) shape[i] = stored[rel[i]];
      t = builder_.Reshape(v.tensor, shape);
      if (!scratch_) builder_.mutable_graph().tensors[t].name = v.name + LayoutSuffix(perm);
    } else {
      t = builder_.Transpose(v.tensor, rel);
      if (!scratch_) builder_.mutable_graph().tensors[t].name = v.name + LayoutSuffix(perm);
    }
  }
  v.layouts[perm] = t;
  return t;
}

// -------------------------------------------------------------- NodeContext

builder::GraphBuilder& NodeContext::b() { return lowerer_.builder(); }

namespace {
const Attribute* FindAttr(const Node& node, const std::string& name) {
  auto it = node.attributes.find(name);
  return it == node.attributes.end() ? nullptr : &it->second;
}
}  // namespace

int64_t NodeContext::Int(const std::string& name, int64_t fallback) const {
  const Attribute* a = FindAttr(node_, name);
  if (!a) return fallback;
  if (a->kind != Attribute::kInt) BadModel("attribute '" + name + "' is not an int");
  return a->i;
}

float NodeContext::Float(const std::string& name, float fallback) const {
  const Attribute* a = FindAttr(node_, name);
  if (!a) return fallback;
  if (a->kind == Attribute::kInt) return static_cast<float>(a->i);
  if (a->kind != Attribute::kFloat) BadModel("attribute '" + name + "' is not a float");
  return a->f;
}

std::string NodeContext::Str(const std::string& name, const std::string& fallback) const {
  const Attribute* a = FindAttr(node_, name);
  if (!a) return fallback;
  if (a->kind != Attribute::kString) BadModel("attribute '" + name + "' is not a string");
  return a->s;
}

std::vector<int64_t> NodeContext::Ints(const std::string& name, std::vector<int64_t> fallback) const {
  const Attribute* a = FindAttr(node_, name);
  if (!a) return fallback;
  if (a->kind == Attribute::kInt) return {a->i};
  if (a->kind != Attribute::kInts) BadModel("attribute '" + name + "' is not a list of ints");
  return a->ints;
}

std::vector<float> NodeContext::Floats(const std::string& name, std::vector<float> fallback) const {
  const Attribute* a = FindAttr(node_, name);
  if (!a) return fallback;
  if (a->kind != Attribute::kFloats) BadModel("attribute '" + name + "' is not a list of floats");
  return a->floats;
}

const npy::Array& NodeContext::TensorAttr(const std::string& name) const {
  const Attribute* a = FindAttr(node_, name);
  if (!a || a->kind != Attribute::kTensor || !a->tensor) BadModel("attribute '" + name + "' is not a tensor");
  return *a->tensor;
}

const Value& NodeContext::In(int i) const {
  if (!Has(i)) BadModel(fmt::format("input {} is missing", i));
  return lowerer_.value(node_.inputs[i]);
}

const npy::Array& NodeContext::Const(int i) const {
  const Value& v = In(i);
  if (!v.constant)
    Fail(fmt::format("input {} ('{}') must be known at convert time; it is computed at run time", i, v.name));
  return *v.constant;
}

std::vector<int64_t> NodeContext::ConstInts(int i) const {
  const npy::Array& a = Const(i);
  std::vector<int64_t> out(a.num_elements());
  for (size_t k = 0; k < out.size(); ++k) {
    switch (a.dtype) {
      case tfl::TensorType_INT64: out[k] = a.as<int64_t>()[k]; break;
      case tfl::TensorType_INT32: out[k] = a.as<int32_t>()[k]; break;
      case tfl::TensorType_UINT8:
      case tfl::TensorType_BOOL: out[k] = a.as<uint8_t>()[k]; break;
      case tfl::TensorType_INT8: out[k] = a.as<int8_t>()[k]; break;
      case tfl::TensorType_FLOAT32: out[k] = static_cast<int64_t>(a.as<float>()[k]); break;
      default: Fail(fmt::format("input {} has dtype {}, expected integers", i, ir::DTypeName(a.dtype)));
    }
  }
  return out;
}

std::vector<float> NodeContext::ConstFloats(int i) const {
  const npy::Array& a = Const(i);
  std::vector<float> out(a.num_elements());
  for (size_t k = 0; k < out.size(); ++k) {
    switch (a.dtype) {
      case tfl::TensorType_FLOAT32: out[k] = a.as<float>()[k]; break;
      case tfl::TensorType_INT64: out[k] = static_cast<float>(a.as<int64_t>()[k]); break;
      case tfl::TensorType_INT32: out[k] = static_cast<float>(a.as<int32_t>()[k]); break;
      case tfl::TensorType_FLOAT16: out[k] = HalfToFloat(a.as<uint16_t>()[k]); break;
      default: Fail(fmt::format("input {} has dtype {}, expected floats", i, ir::DTypeName(a.dtype)));
    }
  }
  return out;
}

Perm NodeContext::PermOf(int i) const {
  const Value& v = In(i);
  return v.constant ? Perm{} : Normalized(v.perm);
}

int NodeContext::TensorIn(int i, const Perm& perm) {
  In(i);
  return lowerer_.Materialize(lowerer_.value(node_.inputs[i]), perm);
}

std::vector<int> NodeContext::Aligned(const std::vector<int>& indices, Perm* perm_out) {
  int rank = 0;
  for (int i : indices) rank = std::max(rank, Rank(i));
  Perm perm;
  for (int i : indices)
    if (!IsConst(i) && Rank(i) == rank && !PermOf(i).empty()) {
      perm = PermOf(i);
      break;
    }
  std::vector<int> out;
  for (int i : indices) {
    const Value& v = In(i);
    if (Rank(i) == rank) {
      out.push_back(TensorIn(i, perm));
    } else if (v.constant) {
      if (v.constant->num_elements() == 1) {
        out.push_back(TensorIn(i, {}));
        continue;
      }
      npy::Array c = ToStored(*v.constant, lowerer_.scratch(), v.name);
      c.shape.insert(c.shape.begin(), rank - Rank(i), 1);
      c = TransposeHost(c, perm);
      out.push_back(b().Const(v.name + "|rank" + std::to_string(rank) + LayoutSuffix(perm), c.dtype,
                              ToShape32(c.shape, v.name), Bytes::Own(std::move(c.data))));
    } else {
      int t = Tensor(i);
      if (!perm.empty()) {
        Dims shape = v.shape;
        shape.insert(shape.begin(), rank - Rank(i), 1);
        t = b().Transpose(b().Reshape(t, ToShape32(shape, v.name)), perm);
      }
      out.push_back(t);
    }
  }
  if (perm_out) *perm_out = perm;
  return out;
}

namespace {

// The layout a reshape from `in` (stored with `perm`) to `out` can keep, or
// nullopt when the data would have to move.
std::optional<Perm> ReshapeLayout(const Dims& in, const Perm& perm, const Dims& out) {
  const int in_rank = static_cast<int>(in.size()), out_rank = static_cast<int>(out.size());
  const Perm p = perm.empty() ? IdentityPerm(in_rank) : perm;
  // Position of each non-unit input axis in stored order.
  std::vector<int> pos(in_rank, -1);
  int n = 0;
  for (int a : p)
    if (in[a] != 1) pos[a] = n++;
  // Groups of non-unit axes with equal products, in ONNX order.
  struct Group {
    std::vector<int> in_axes, out_axes;
  };
  std::vector<Group> groups;
  int i = 0, j = 0;
  auto next_in = [&] {
    while (i < in_rank && in[i] == 1) ++i;
  };
  auto next_out = [&] {
    while (j < out_rank && out[j] == 1) ++j;
  };
  next_in();
  next_out();
  while (i < in_rank || j < out_rank) {
    if (i >= in_rank || j >= out_rank) return std::nullopt;
    Group g;
    int64_t pi = in[i], po = out[j];
    g.in_axes.push_back(i++);
    g.out_axes.push_back(j++);
    while (pi != po) {
      if (pi < po) {
        next_in();
        if (i >= in_rank) return std::nullopt;
        pi *= in[i];
        g.in_axes.push_back(i++);
      } else {
        next_out();
        if (j >= out_rank) return std::nullopt;
        po *= out[j];
        g.out_axes.push_back(j++);
      }
    }
    for (size_t k = 1; k < g.in_axes.size(); ++k)
      if (pos[g.in_axes[k]] != pos[g.in_axes[k - 1]] + 1) return std::nullopt;
    groups.push_back(std::move(g));
    next_in();
    next_out();
  }
  std::sort(groups.begin(), groups.end(),
            [&](const Group& a, const Group& b) { return pos[a.in_axes[0]] < pos[b.in_axes[0]]; });
  Perm stored;
  for (const Group& g : groups) stored.insert(stored.end(), g.out_axes.begin(), g.out_axes.end());
  // Unit output axes go right after the axis before them in ONNX order.
  for (int a = 0; a < out_rank; ++a) {
    if (out[a] != 1) continue;
    auto at = a == 0 ? stored.begin() : std::find(stored.begin(), stored.end(), a - 1);
    stored.insert(at == stored.end() ? stored.begin() : (a == 0 ? at : at + 1), a);
  }
  return stored;
}

}  // namespace

int NodeContext::Reshaped(int i, const Dims& shape, Perm* perm_out) {
  const Perm perm = PermOf(i);
  std::optional<Perm> layout = perm.empty() ? std::nullopt : ReshapeLayout(Shape(i), perm, shape);
  if (!layout) {
    *perm_out = {};
    return b().Reshape(Tensor(i), ToShape32(shape, node_.Label()));
  }
  *perm_out = IsIdentity(*layout) ? Perm{} : *layout;
  return b().Reshape(TensorIn(i, perm), ToShape32(PermuteDims(shape, *layout), node_.Label()));
}

void NodeContext::Out(int k, int tensor, const Perm& perm_in) {
  if (!HasOutput(k)) return;
  const Perm perm = Normalized(perm_in);
  const std::string& name = node_.outputs[k];
  const ir::Tensor& t = b().tensor(tensor);
  Value v;
  v.name = name;
  v.dtype = t.dtype;
  v.tensor = tensor;
  v.perm = perm;
  Dims stored(t.shape.begin(), t.shape.end());
  if (!perm.empty() && perm.size() != stored.size())
    ThrowInternal(fmt::format("{}: layout of rank {} for a rank-{} tensor", node_.Label(), perm.size(), stored.size()));
  v.shape = stored;
  if (!perm.empty())
    for (size_t i = 0; i < perm.size(); ++i) v.shape[perm[i]] = stored[i];
  v.layouts[perm] = tensor;
  // A constant result (a folded or pass-through constant) stays foldable.
  if (t.is_const() && perm.empty() && t.sparsity == std::nullopt && t.quant.empty()) {
    npy::Array c;
    c.dtype = t.dtype;
    c.shape = v.shape;
    c.data.assign(t.data->data(), t.data->data() + t.data->size());
    v.constant = std::move(c);
  }
  if (!lowerer_.scratch() && !lowerer_.named().count(tensor) && !t.is_const() && !b().graph().IsGraphInput(tensor)) {
    lowerer_.named()[tensor] = name;
    b().mutable_graph().tensors[tensor].name = name + LayoutSuffix(perm);
  }
  lowerer_.values()[name] = std::move(v);
}

void NodeContext::OutConst(int k, npy::Array value) {
  if (!HasOutput(k)) return;
  Value v;
  v.name = node_.outputs[k];
  v.dtype = StoredDType(value.dtype);
  v.shape = value.shape;
  v.constant = std::move(value);
  lowerer_.values()[v.name] = std::move(v);
}

void NodeContext::SetRows(int k, const ValidRows& rows) {
  if (!HasOutput(k)) return;
  Value& v = lowerer_.value(node_.outputs[k]);
  if (rows.axis < 0 || rows.axis >= static_cast<int>(v.shape.size()))
    ThrowInternal(fmt::format("{}: padded axis {} of a rank-{} value", node_.Label(), rows.axis, v.shape.size()));
  v.rows = rows;
  v.constant.reset();  // its length is known at run time only: never folded
}

void NodeContext::SetRanges(int k, std::vector<IntRange> ranges) {
  if (!HasOutput(k)) return;
  lowerer_.value(node_.outputs[k]).ranges = std::move(ranges);
}

void NodeContext::Define(const std::string& name, int tensor, std::optional<ValidRows> rows) {
  Value v;
  v.name = name;
  v.dtype = b().tensor(tensor).dtype;
  v.tensor = tensor;
  v.shape.assign(b().tensor(tensor).shape.begin(), b().tensor(tensor).shape.end());
  v.layouts[{}] = tensor;
  v.rows = rows;
  lowerer_.values()[name] = std::move(v);
}

const Graph& NodeContext::Subgraph(const std::string& name) const {
  const Attribute* a = FindAttr(node_, name);
  if (!a || !a->graph) BadModel("has no graph attribute '" + name + "'");
  return *a->graph;
}

void NodeContext::LowerSubgraph(const Graph& g) {
  for (const auto& [name, array] : g.initializers) lowerer_.AddConstant(name, array);
  lowerer_.LowerNodes(g.nodes);
}

void NodeContext::LowerNode(const Node& node) { lowerer_.LowerNodes({node}); }

const Value& NodeContext::ValueOf(const std::string& name) const { return lowerer_.value(name); }

bool NodeContext::RoundsHalfValues() const { return lowerer_.options().round_half_values; }

ir::DType NodeContext::OnnxDType(int i) const {
  const Value& v = In(i);
  if (v.constant) return v.constant->dtype;
  const Graph& g = lowerer_.graph();
  if (const auto it = g.value_info.find(v.name); it != g.value_info.end() && it->second.dtype_known)
    return it->second.dtype;
  for (const ValueInfo& in : g.inputs)
    if (in.name == v.name) return in.dtype;
  return v.dtype;
}

int NodeContext::ConstF32(const Dims& shape, const std::vector<float>& values) {
  const std::string base = node_.outputs.empty() ? node_.op_type : node_.outputs[0];
  return b().ConstF32(fmt::format("{}/const{}", base, b().graph().tensors.size()), ToShape32(shape, base), values);
}

int NodeContext::ConstI32(const Dims& shape, const std::vector<int32_t>& values) {
  const std::string base = node_.outputs.empty() ? node_.op_type : node_.outputs[0];
  return b().ConstI32(fmt::format("{}/const{}", base, b().graph().tensors.size()), ToShape32(shape, base), values);
}

void NodeContext::Fail(const std::string& why) const {
  ThrowUnsupported(fmt::format("{}: {}: {}", lowerer_.graph().source, node_.Label(), why));
}

void NodeContext::BadModel(const std::string& why) const {
  ThrowBadInput(fmt::format("{}: {}: {}", lowerer_.graph().source, node_.Label(), why));
}

// ------------------------------------------------------------------- driver

namespace {
void CollectMissing(const Graph& g, std::map<std::string, std::pair<int, std::string>>& missing) {
  for (const Node& n : g.nodes) {
    for (const auto& [_, a] : n.attributes)
      if (a.graph) CollectMissing(*a.graph, missing);
    if (Rules().rules.count(n.op_type)) continue;
    auto& [count, first] = missing[n.op_type];
    if (count++ == 0) first = n.Label();
  }
}
}  // namespace

void RequireSupported(const Graph& g) {
  std::map<std::string, std::pair<int, std::string>> missing;
  CollectMissing(g, missing);
  if (missing.empty()) return;
  std::string list;
  for (const auto& [op, c] : missing)
    list += fmt::format("{}{} ({} node(s), first {})", list.empty() ? "" : "; ", op, c.first, c.second);
  ThrowUnsupported(fmt::format("{}: {} ONNX op type(s) gpuclean cannot convert: {}", g.source, missing.size(), list));
}

namespace {

// Widens an evaluated constant back to the ONNX dtype shape inference gave
// (the interpreter computes int64 in int32).
npy::Array ToOnnxDType(npy::Array a, ir::DType onnx_dtype) {
  if (onnx_dtype == tfl::TensorType_INT64 && a.dtype == tfl::TensorType_INT32) {
    npy::Array w;
    w.dtype = onnx_dtype;
    w.shape = a.shape;
    w.data.resize(a.num_elements() * 8);
    for (int64_t i = 0; i < a.num_elements(); ++i) w.as<int64_t>()[i] = a.as<int32_t>()[i];
    return w;
  }
  return a;
}

void Fold(Lowerer& main, const Node& node, const LowerFn& rule) {
  Lowerer scratch(main.graph(), main.options(), /*scratch=*/true);
  for (const std::string& in : node.inputs) {
    if (in.empty()) continue;
    const Value& v = main.value(in);
    Value copy;
    copy.name = v.name;
    copy.dtype = v.dtype;
    copy.shape = v.shape;
    copy.constant = v.constant;
    scratch.values()[in] = std::move(copy);
  }
  NodeContext ctx(scratch, node);
  rule(ctx);
  std::vector<std::pair<std::string, int>> computed;
  for (const std::string& out : node.outputs) {
    if (out.empty()) continue;
    auto it = scratch.values().find(out);
    if (it == scratch.values().end()) ThrowInternal(node.Label() + ": lowering left output '" + out + "' unset");
    if (it->second.constant) {
      Value v = it->second;
      v.layouts.clear();
      v.tensor = -1;
      main.values()[out] = std::move(v);
    } else {
      computed.emplace_back(out, scratch.Materialize(it->second, {}));
    }
  }
  if (computed.empty()) return;
  for (const auto& [_, t] : computed) scratch.builder().Output(t);
  auto model = std::make_shared<ir::Model>(scratch.builder().Finish());
  exec::Interpreter interpreter(model);
  interpreter.Invoke();
  for (size_t k = 0; k < computed.size(); ++k) {
    const std::string& name = computed[k].first;
    auto info = main.graph().value_info.find(name);
    npy::Array a = interpreter.Output(static_cast<int>(k));
    if (info != main.graph().value_info.end()) a = ToOnnxDType(std::move(a), info->second.dtype);
    Value v;
    v.name = name;
    v.dtype = StoredDType(a.dtype);
    v.shape = a.shape;
    v.constant = std::move(a);
    main.values()[name] = std::move(v);
  }
}

bool ExactInHalf(const float* v, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const float back = HalfToFloat(FloatToHalf(v[i]));
    if (std::memcmp(&back, &v[i], sizeof(float)) != 0) return false;
  }
  return true;
}

// Every reader of a replaced constant (but its DEQUANTIZE) reads the
// DEQUANTIZE output instead, which takes the constant's name; the builder's
// graph goes back to `graph` without the originals. Returns how many.
int ReadThroughDequantize(builder::GraphBuilder& b, ir::Subgraph& graph, const std::map<int, int>& replaced) {
  ir::Subgraph& g = b.mutable_graph();
  for (auto& op : g.ops) {
    if (op.code == tfl::BuiltinOperator_DEQUANTIZE) continue;
    for (int32_t& in : op.inputs)
      if (auto it = replaced.find(in); it != replaced.end()) in = it->second;
  }
  for (const auto& [from, to] : replaced) {
    g.tensors[to].name = g.tensors[from].name;
    g.tensors[from].name += "|unused";
  }
  graph = b.Release();
  graph.RemoveDeadTensors();
  graph.SortOps();
  return static_cast<int>(replaced.size());
}

// Every float32 constant of more than one element becomes a float16 constant
// read through DEQUANTIZE, the way LiteRT's own fp16 models store weights.
// `only_exact`: only those whose every value is a half already (weights an
// fp16 model stored, widened by its Casts): lossless, half the bytes.
// Returns how many were stored so.
int StoreFloatWeightsAsFp16(ir::Subgraph& graph, bool only_exact) {
  builder::GraphBuilder b = builder::GraphBuilder::Extend(std::move(graph), "fp16/");
  ir::Subgraph& g = b.mutable_graph();
  const size_t original = g.tensors.size();
  std::map<int, int> replaced;
  for (size_t t = 0; t < original; ++t) {
    const ir::Tensor& tensor = g.tensors[t];
    if (!tensor.is_const() || tensor.dtype != tfl::TensorType_FLOAT32 || tensor.num_elements() <= 1 ||
        !tensor.quant.empty() || tensor.sparsity)
      continue;
    const auto values = tensor.data->as<float>();
    if (only_exact && !ExactInHalf(values.data(), values.size())) continue;
    const std::string name = tensor.name;
    const std::vector<int32_t> shape = tensor.shape;
    const int half = b.ConstF16FromF32(name + "|fp16", shape, std::vector<float>(values.begin(), values.end()));
    const int dequantized = b.Dequantize(half);
    replaced[static_cast<int>(t)] = dequantized;
  }
  return ReadThroughDequantize(b, graph, replaced);
}

// Weight-only int8: each conv-like op's float weights become int8 with one
// symmetric scale for the tensor (max |w| / 127, zero point 0) read through
// DEQUANTIZE. Per tensor because ML Drift takes DEQUANTIZE up to version 3
// (model_builder.cc:1991 @ v2.2.0) and a per-channel int8 DEQUANTIZE is
// version 5: refused, as LiteRT.js's WebGPU delegate says when asked
// (docs/convert.md, "int8 weights"). Biases and every other constant stay
// float. Returns how many tensors were stored so.
int StoreConvWeightsAsInt8(ir::Subgraph& graph) {
  builder::GraphBuilder b = builder::GraphBuilder::Extend(std::move(graph), "int8/");
  ir::Subgraph& g = b.mutable_graph();
  const auto conv_like = [](tfl::BuiltinOperator code) {
    return code == tfl::BuiltinOperator_CONV_2D || code == tfl::BuiltinOperator_TRANSPOSE_CONV ||
           code == tfl::BuiltinOperator_FULLY_CONNECTED || code == tfl::BuiltinOperator_DEPTHWISE_CONV_2D;
  };
  std::map<int, int> replaced;  // float weight -> DEQUANTIZE output
  const size_t ops = g.ops.size();
  for (size_t i = 0; i < ops; ++i) {
    constexpr int kWeights = 1;  // the filter of every op above
    if (!conv_like(g.ops[i].code) || static_cast<int>(g.ops[i].inputs.size()) <= kWeights) continue;
    const int w = g.ops[i].inputs[kWeights];
    if (w < 0 || replaced.count(w)) continue;
    const ir::Tensor& tensor = g.tensors[w];
    if (!tensor.is_const() || tensor.dtype != tfl::TensorType_FLOAT32 || tensor.num_elements() <= 1 ||
        !tensor.quant.empty() || tensor.sparsity)
      continue;
    const auto values = tensor.data->as<float>();
    const std::vector<int32_t> shape = tensor.shape;
    float max_abs = 0;
    for (float v : values) max_abs = std::max(max_abs, std::fabs(v));
    const float scale = max_abs > 0 ? max_abs / 127.0f : 1.0f;
    std::vector<int8_t> q(values.size());
    for (size_t k = 0; k < values.size(); ++k)
      q[k] = static_cast<int8_t>(std::clamp(std::nearbyint(values[k] / scale), -127.0f, 127.0f));
    const int quantized = b.ConstInt8(tensor.name + "|int8", shape, q, scale, 0);
    replaced[w] = b.Dequantize(quantized);
  }
  return ReadThroughDequantize(b, graph, replaced);
}

// An fp16 model: float16 initializers or Constant values anywhere.
bool HoldsHalfWeights(const Graph& g) {
  for (const auto& [_, a] : g.initializers)
    if (a.dtype == tfl::TensorType_FLOAT16) return true;
  for (const Node& n : g.nodes)
    for (const auto& [_, a] : n.attributes) {
      if (a.tensor && a.tensor->dtype == tfl::TensorType_FLOAT16) return true;
      if (a.graph && HoldsHalfWeights(*a.graph)) return true;
    }
  return false;
}

}  // namespace

// Ops that hold graphs read names of the scope around them that are not
// their inputs: they are lowered in place, never folded in a scratch graph.
bool HoldsGraphs(const Node& node) {
  for (const auto& [_, a] : node.attributes)
    if (a.kind == Attribute::kGraph) return true;
  return false;
}

void Lowerer::LowerNodes(const std::vector<Node>& nodes) {
  for (const Node& node : nodes) {
    bool all_const = !HoldsGraphs(node);
    for (const std::string& in : node.inputs)
      if (!in.empty() && !value(in).constant) all_const = false;
    const bool padded = !all_const && ReadsDataDependentLength(values_, node);
    const auto rule_of = [&]() -> const LowerFn& {
      if (!padded) return Rules().rules.at(node.op_type);
      const auto it = PaddedRules().rules.find(node.op_type);
      if (it != PaddedRules().rules.end()) return it->second;
      std::string which;
      for (const std::string& in : node.inputs)
        if (!in.empty() && (value(in).rows || !value(in).ranges.empty())) which = in;
      throw Error(ErrorKind::kUnsupported,
                  fmt::format("{}: {} reads '{}', whose length depends on the data (NonZero, NonMaxSuppression, a TopK "
                              "of a computed k), and gpuclean does not convert {} of such a value",
                              graph_.source, node.Label(), which, node.op_type));
    };
    const LowerFn& rule = rule_of();
    // Helpers that throw below a node (NormalizeAxis, the builder) do not
    // know the file; every refusal names it.
    const auto named = [&](const auto& lower) {
      try {
        lower();
      } catch (const Error& e) {
        const std::string what = e.what();
        if (e.kind() == ErrorKind::kInternal || what.rfind(graph_.source, 0) == 0) throw;
        throw Error(e.kind(), graph_.source + ": " + what);
      }
    };
    if (all_const) {
      named([&] { Fold(*this, node, rule); });
      ++folded_[node.op_type];
    } else {
      NodeContext ctx(*this, node);
      named([&] { rule(ctx); });
      bool all_known = true;
      for (const std::string& out : node.outputs) {
        if (out.empty()) continue;
        if (!values_.count(out)) ThrowInternal(node.Label() + ": lowering left output '" + out + "' unset");
        all_known = all_known && value(out).constant.has_value();
      }
      // Shape and friends of a runtime tensor are known from its static shape.
      if (all_known) ++folded_[node.op_type];
      for (const std::string& out : node.outputs)
        if (!out.empty()) RoundWhereOnnxStoresHalf(out);
    }
    ++nodes_lowered_;
  }
}

// The proof's half-storage variant (LowerOptions::round_half_values): a
// value the ONNX graph types float16, stored here as float32, is rounded to
// half where it is computed, by a CAST pair, unless it already is a half.
// Values that only move halves (layout and indexing ops of a rounded input)
// are exact.
bool Lowerer::IsHalfExact(int tensor) const {
  const ir::Subgraph& g = builder_.graph();
  const ir::Tensor& t = g.tensors[tensor];
  if (t.dtype == tfl::TensorType_FLOAT16) return true;
  const int producer = g.Producer(tensor);
  if (producer < 0) return false;
  const ir::Op& op = g.ops[producer];
  if (op.code == tfl::BuiltinOperator_CAST)
    return !op.inputs.empty() && g.tensors[op.inputs[0]].dtype == tfl::TensorType_FLOAT16;
  const ir::OpFamily family = ir::TraitsOf(op.code).family;
  const bool moves_values =
      (family == ir::OpFamily::kLayout || family == ir::OpFamily::kIndexing) && op.code != tfl::BuiltinOperator_SHAPE;
  return moves_values && !op.inputs.empty() && op.inputs[0] >= 0 && IsHalfExact(op.inputs[0]);
}

void Lowerer::RoundWhereOnnxStoresHalf(const std::string& name) {
  if (scratch_ || !options_.round_half_values) return;
  const auto info = graph_.value_info.find(name);
  if (info == graph_.value_info.end() || info->second.dtype != tfl::TensorType_FLOAT16) return;
  Value& v = value(name);
  if (v.constant || v.tensor < 0 || v.dtype != tfl::TensorType_FLOAT32 || IsHalfExact(v.tensor)) return;
  const int unrounded = v.tensor;
  const int rounded = builder_.Cast(builder_.Cast(unrounded, tfl::TensorType_FLOAT16), tfl::TensorType_FLOAT32);
  auto& tensors = builder_.mutable_graph().tensors;
  if (named_.count(unrounded) && named_[unrounded] == name) {
    tensors[rounded].name = tensors[unrounded].name;
    tensors[unrounded].name += "|unrounded";
    named_.erase(unrounded);
  }
  named_[rounded] = name;
  v.tensor = rounded;
  v.layouts = {{v.perm, rounded}};
}

void Lowerer::AddConstant(const std::string& name, npy::Array array) {
  Value v;
  v.name = name;
  v.dtype = StoredDType(array.dtype);
  v.shape = array.shape;
  v.constant = std::move(array);
  values_[name] = std::move(v);
}

LoweredGraph Lower(Graph& g, const LowerOptions& options) {
  RequireSupported(g);
  FuseExactGelu(g);
  // A quantized model's weights fold to small integers (codes less their
  // zero point), which a half holds exactly: kept as float16 too.
  const bool half_weights = HoldsHalfWeights(g) || g.quantized_nodes > 0;
  Lowerer L(g, options, /*scratch=*/false);
  auto& b = L.builder();
  for (const ValueInfo& in : g.inputs) {
    if (!in.dtype_known)
      ThrowUnsupported(fmt::format("{}: graph input '{}' has a dtype gpuclean does not convert", g.source, in.name));
    Value v;
    v.name = in.name;
    v.dtype = StoredDType(in.dtype);
    v.shape = in.shape;
    const bool nhwc = options.nhwc_io && in.shape.size() == 4 && in.dtype == tfl::TensorType_FLOAT32;
    v.perm = nhwc ? kToNhwc : Perm{};
    const auto shape = ToShape32(PermuteDims(in.shape, v.perm), "input '" + in.name + "'");
    if (IsSingleVideo(in)) {
      // A clip [1, C, D, H, W]: the GPU takes no rank-5 tensor, so the
      // graph's input is the clip less its batch of one - [C, D, H, W], or
      // its NDHWC frames [D, H, W, C] with nhwc_io - and the ops see the
      // rank-5 values it reshapes to, NDHWC moved at rank 4.
      const Perm stored = options.nhwc_io ? kToNdhwc : Perm{};
      const std::vector<int32_t> clip = ToShape32(PermuteDims(in.shape, stored), "input '" + in.name + "'");
      const int input = b.Input(in.name, v.dtype, {clip.begin() + 1, clip.end()});
      const int frames = options.nhwc_io ? input : b.Transpose(input, {1, 2, 3, 0});
      const std::vector<int32_t> ndhwc = ToShape32(PermuteDims(in.shape, kToNdhwc), "input '" + in.name + "'");
      v.perm = stored;
      v.layouts[kToNdhwc] = b.Reshape(frames, ndhwc);
      b.mutable_graph().tensors[v.layouts[kToNdhwc]].name = in.name + LayoutSuffix(kToNdhwc);
      L.named()[v.layouts[kToNdhwc]] = in.name;
      if (!options.nhwc_io) {
        v.layouts[Perm{}] = b.Reshape(input, ToShape32(in.shape, "input '" + in.name + "'"));
        b.mutable_graph().tensors[v.layouts[Perm{}]].name = in.name + "|clip";
        L.named()[v.layouts[Perm{}]] = in.name;
      }
      v.tensor = v.layouts[v.perm];
      L.values()[in.name] = std::move(v);
      continue;
    }
    if (in.dtype == tfl::TensorType_FLOAT16) {
      // The caller's buffer stays half, as onnxruntime's; the graph widens it.
      const int half = b.Input(in.name, tfl::TensorType_FLOAT16, shape);
      v.tensor = b.Cast(half, tfl::TensorType_FLOAT32);
      b.mutable_graph().tensors[v.tensor].name = in.name + "|f32";
    } else {
      v.tensor = b.Input(in.name, v.dtype, shape);
    }
    v.layouts[v.perm] = v.tensor;
    L.named()[v.tensor] = in.name;
    L.values()[in.name] = std::move(v);
  }
  for (auto& [name, array] : g.initializers) L.AddConstant(name, std::move(array));
  g.initializers.clear();
  LoweredGraph result;
  L.LowerNodes(g.nodes);
  result.folded = L.folded();
  result.nodes_lowered = L.nodes_lowered();
  std::vector<std::pair<std::string, int>> counts;
  for (const ValueInfo& out : g.outputs) {
    Value& v = L.value(out.name);
    const bool nhwc = options.nhwc_io && v.shape.size() == 4 && v.dtype == tfl::TensorType_FLOAT32 && !v.rows;
    int t = L.Materialize(v, nhwc ? kToNhwc : Perm{});
    if (v.rows) {
      // Rows past the count are zeros, so what a caller reads is defined.
      if (b.tensor(t).name == out.name + LayoutSuffix(v.perm)) b.mutable_graph().tensors[t].name += "|unzeroed";
      t = ZeroPastCount(b, t, *v.rows);
      const std::string count = out.name + "_count";
      if (L.values().count(count))
        ThrowUnsupported(fmt::format("{}: output '{}' is padded and '{}' is taken", g.source, out.name, count));
      result.padded_outputs.push_back({out.name, v.rows->axis, count});
      counts.emplace_back(count, v.rows->count);
    }
    if (out.dtype == tfl::TensorType_FLOAT16 && b.tensor(t).dtype == tfl::TensorType_FLOAT32) {
      b.mutable_graph().tensors[t].name = out.name + "|f32";
      t = b.Cast(t, tfl::TensorType_FLOAT16);
    } else if (b.tensor(t).is_const() || b.graph().IsGraphInput(t) || b.graph().IsGraphOutput(t)) {
      // The format wants every output written by an op.
      t = b.Reshape(t, b.shape(t));
    }
    b.mutable_graph().tensors[t].name = out.name;
    L.named()[t] = out.name;
    b.Output(t);
  }
  for (const auto& [name, count] : counts) {
    const int t = b.Reshape(count, {});
    b.mutable_graph().tensors[t].name = name;
    b.Output(t);
  }
  // Counts get names of their own, so a run can read them beside the
  // values they count (the proof's bisect cuts padded values with them).
  for (auto& [name, v] : L.values()) {
    if (!v.rows || L.named().count(v.rows->count) || b.graph().IsGraphOutput(v.rows->count)) continue;
    if (b.tensor(v.rows->count).is_const()) continue;
    L.named()[v.rows->count] = name + "|count";
    b.mutable_graph().tensors[v.rows->count].name = name + "|count";
  }
  result.model = b.Finish();
  result.model.description = "gpuclean convert from " + g.source;
  for (const ValueInfo& in : g.inputs)  // a clip, less its batch of one
    if (IsSingleVideo(in))
      result.origins[in.name] = {in.name, options.nhwc_io ? kToNdhwc : IdentityPerm(5), {}, -1, {}};
  const ir::Subgraph& graph = result.model.main();
  for (const auto& [name, v] : L.values()) {
    for (const auto& [perm, t] : v.layouts) {
      if (t < 0 || t >= static_cast<int>(graph.tensors.size()) || graph.tensors[t].is_const()) continue;
      auto it = L.named().find(t);
      if (it == L.named().end() || it->second != name) continue;
      result.origins[graph.tensors[t].name] = {name, perm, {}, -1, {}};
      if (v.rows)
        result.origins[graph.tensors[t].name] = {name, perm, {}, v.rows->axis, graph.tensors[v.rows->count].name};
    }
  }
  // Scale, then bias, then activation: Conv + BatchNormalization (MUL, ADD)
  // + Relu, or MatMul + Add + Relu, becomes one op.
  std::vector<FoldedOp> folded = FoldChannelScales(result.model.main());
  for (FoldedOp& f : FoldBiasAdds(result.model.main())) folded.push_back(std::move(f));
  for (FoldedOp& f : FoldActivations(result.model.main())) folded.push_back(std::move(f));
  if (!folded.empty()) result.model.RemoveDeadTensors(0);
  for (const FoldedOp& f : folded) {
    const auto gone = result.origins.find(f.gone);
    const auto kept = result.origins.find(f.kept);
    // A chain (MatMul + Add + Relu) names its first op.
    if (gone != result.origins.end() && kept != result.origins.end())
      kept->second.fused_from = gone->second.fused_from.empty() ? gone->second.onnx_name : gone->second.fused_from;
    if (gone != result.origins.end()) result.origins.erase(gone);
  }
  if (options.int8_weights) result.int8_weights = StoreConvWeightsAsInt8(result.model.main());
  if (options.fp16_weights)
    StoreFloatWeightsAsFp16(result.model.main(), /*only_exact=*/false);
  else if (half_weights)
    result.half_weights_kept = StoreFloatWeightsAsFp16(result.model.main(), /*only_exact=*/true);
  return result;
}

}  // namespace gpuclean::onnx
