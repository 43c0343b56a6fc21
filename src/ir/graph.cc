#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <queue>

#include "gpuclean/error.h"
#include "gpuclean/ir.h"
#include "gpuclean/shapes.h"

namespace gpuclean::ir {

std::string_view DTypeName(DType dtype) {
  switch (dtype) {
    case tfl::TensorType_FLOAT32: return "float32";
    case tfl::TensorType_FLOAT16: return "float16";
    case tfl::TensorType_BFLOAT16: return "bfloat16";
    case tfl::TensorType_FLOAT64: return "float64";
    case tfl::TensorType_INT32: return "int32";
    case tfl::TensorType_UINT32: return "uint32";
    case tfl::TensorType_INT64: return "int64";
    case tfl::TensorType_UINT64: return "uint64";
    case tfl::TensorType_INT16: return "int16";
    case tfl::TensorType_UINT16: return "uint16";
    case tfl::TensorType_INT8: return "int8";
    case tfl::TensorType_UINT8: return "uint8";
    case tfl::TensorType_INT4: return "int4";
    case tfl::TensorType_BOOL: return "bool";
    case tfl::TensorType_STRING: return "string";
    case tfl::TensorType_COMPLEX64: return "complex64";
    case tfl::TensorType_COMPLEX128: return "complex128";
    case tfl::TensorType_RESOURCE: return "resource";
    case tfl::TensorType_VARIANT: return "variant";
    default: return "unknown";
  }
}

size_t DTypeSize(DType dtype) {
  switch (dtype) {
    case tfl::TensorType_FLOAT32: return 4;
    case tfl::TensorType_FLOAT16: return 2;
    case tfl::TensorType_BFLOAT16: return 2;
    case tfl::TensorType_FLOAT64: return 8;
    case tfl::TensorType_INT32: return 4;
    case tfl::TensorType_UINT32: return 4;
    case tfl::TensorType_INT64: return 8;
    case tfl::TensorType_UINT64: return 8;
    case tfl::TensorType_INT16: return 2;
    case tfl::TensorType_UINT16: return 2;
    case tfl::TensorType_INT8: return 1;
    case tfl::TensorType_UINT8: return 1;
    case tfl::TensorType_BOOL: return 1;
    case tfl::TensorType_COMPLEX64: return 8;
    case tfl::TensorType_COMPLEX128: return 16;
    default: return 0;
  }
}

int64_t Tensor::num_elements() const {
  int64_t n = 1;
  for (int32_t d : shape) n *= d;
  return n;
}

bool Tensor::is_dynamic() const {
  return std::any_of(shape_signature.begin(), shape_signature.end(), [](int32_t d) { return d < 0; });
}

std::string BuiltinName(tfl::BuiltinOperator code) {
  if (code >= tfl::BuiltinOperator_MIN && code <= tfl::BuiltinOperator_MAX) {
    const char* name = tfl::EnumNameBuiltinOperator(code);
    if (name && *name) return name;
  }
  return fmt::format("BUILTIN_{}", static_cast<int>(code));
}

std::string Op::name() const {
  if (code == tfl::BuiltinOperator_CUSTOM) return custom_code.empty() ? "CUSTOM" : custom_code;
  return BuiltinName(code);
}

// ---------------------------------------------------------------- queries

int Subgraph::Producer(int tensor) const {
  for (size_t i = 0; i < ops.size(); ++i)
    for (int32_t out : ops[i].outputs)
      if (out == tensor) return static_cast<int>(i);
  return -1;
}

std::vector<int> Subgraph::Producers() const {
  std::vector<int> producer(tensors.size(), -1);
  for (size_t i = ops.size(); i-- > 0;)  // the first writer wins, as in Producer
    for (int32_t out : ops[i].outputs)
      if (out >= 0 && out < static_cast<int32_t>(tensors.size()))
        producer[static_cast<size_t>(out)] = static_cast<int>(i);
  return producer;
}

std::vector<std::vector<int>> Subgraph::Consumers() const {
  std::vector<std::vector<int>> consumers(tensors.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    for (int32_t in : ops[i].inputs) {
      if (in < 0 || in >= static_cast<int32_t>(tensors.size())) continue;
      auto& list = consumers[in];
      if (list.empty() || list.back() != static_cast<int>(i)) list.push_back(static_cast<int>(i));
    }
  }
  return consumers;
}

bool Subgraph::IsGraphOutput(int tensor) const {
  return std::find(outputs.begin(), outputs.end(), tensor) != outputs.end();
}
bool Subgraph::IsGraphInput(int tensor) const {
  return std::find(inputs.begin(), inputs.end(), tensor) != inputs.end();
}

std::vector<int> Subgraph::TopologicalOrder() const {
  const int n = static_cast<int>(ops.size());
  std::vector<int> producer(tensors.size(), -1);
  for (int i = 0; i < n; ++i)
    for (int32_t out : ops[i].outputs)
      if (out >= 0 && out < static_cast<int32_t>(tensors.size())) producer[out] = i;
  std::vector<int> pending(n, 0);
  std::vector<std::vector<int>> successors(n);
  for (int i = 0; i < n; ++i) {
    for (int32_t in : ops[i].inputs) {
      if (in < 0 || in >= static_cast<int32_t>(tensors.size())) continue;
      int p = producer[in];
      if (p < 0) continue;
      successors[p].push_back(i);
      ++pending[i];
    }
  }
  // A min-heap keeps the original order whenever it is already valid.
  std::priority_queue<int, std::vector<int>, std::greater<>> ready;
  for (int i = 0; i < n; ++i)
    if (pending[i] == 0) ready.push(i);
  std::vector<int> order;
  order.reserve(n);
  while (!ready.empty()) {
    int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int s : successors[i])
      if (--pending[s] == 0) ready.push(s);
  }
  if (static_cast<int>(order.size()) != n) {
    for (int i = 0; i < n; ++i)
      if (pending[i] > 0)
        ThrowBadInput(
            fmt::format("subgraph '{}': operator graph has a cycle through op {} ({})", name, i, ops[i].name()));
  }
  return order;
}

// ---------------------------------------------------------------- validation

namespace {

// What every graph edit keeps (checked after each edit in invariant-checking
// builds): indices in range, one writer per tensor, no op writes a constant
// or an input, sane shapes, constant sizes, no cycle.
void CheckStructure(const Subgraph& g) {
  const std::string& name = g.name;
  const auto& tensors = g.tensors;
  const auto& ops = g.ops;
  const auto& inputs = g.inputs;
  const auto& outputs = g.outputs;
  // Real models stay far below this (tens of thousands of ops); analysing
  // a graph this large would take minutes, so say so instead.
  constexpr size_t kMaxOps = size_t{1} << 19;
  if (ops.size() > kMaxOps)
    ThrowUnsupported(
        fmt::format("subgraph '{}' has {} ops; gpuclean analyses graphs of up to {} ops", name, ops.size(), kMaxOps));
  const int32_t num_tensors = static_cast<int32_t>(tensors.size());
  auto check_index = [&](int32_t t, bool allow_omitted, const std::string& where) {
    if (allow_omitted && t == -1) return;
    if (t < 0 || t >= num_tensors)
      ThrowBadInput(
          fmt::format("subgraph '{}': {} refers to tensor {} but there are {} tensors", name, where, t, num_tensors));
  };
  std::vector<bool> is_input(tensors.size(), false);
  for (size_t i = 0; i < inputs.size(); ++i) {
    check_index(inputs[i], false, fmt::format("graph input {}", i));
    is_input[inputs[i]] = true;
  }
  for (size_t i = 0; i < outputs.size(); ++i) check_index(outputs[i], false, fmt::format("graph output {}", i));

  std::vector<int> producer(tensors.size(), -1);
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    for (int32_t in : op.inputs) check_index(in, true, fmt::format("op {} ({}) input", i, op.name()));
    for (int32_t t : op.intermediates) check_index(t, false, fmt::format("op {} ({}) intermediate", i, op.name()));
    for (int32_t out : op.outputs) {
      check_index(out, false, fmt::format("op {} ({}) output", i, op.name()));
      if (producer[out] >= 0)
        ThrowBadInput(fmt::format("subgraph '{}': tensor {} ('{}') is written by both op {} and op {}", name, out,
                                  tensors[out].name, producer[out], i));
      producer[out] = static_cast<int>(i);
      if (tensors[out].is_const())
        ThrowBadInput(fmt::format("subgraph '{}': op {} ({}) writes constant tensor {} ('{}')", name, i, op.name(), out,
                                  tensors[out].name));
      if (is_input[out])
        ThrowBadInput(fmt::format("subgraph '{}': op {} ({}) writes graph input tensor {} ('{}')", name, i, op.name(),
                                  out, tensors[out].name));
    }
  }
  constexpr int64_t kMaxElements = kMaxTensorElements;
  for (int32_t t = 0; t < num_tensors; ++t) {
    const Tensor& tensor = tensors[t];
    int64_t elements = 1;
    for (int32_t d : tensor.shape) {
      if (d < 0)
        ThrowBadInput(
            fmt::format("subgraph '{}': tensor {} ('{}') has negative dimension {}", name, t, tensor.name, d));
      if (d > 0 && elements > kMaxElements / d)
        ThrowBadInput(fmt::format("subgraph '{}': tensor {} ('{}') has an absurd shape (more than 2^40 elements)", name,
                                  t, tensor.name));
      elements *= d;
    }
    for (int32_t d : tensor.shape_signature)
      if (d < -1)
        ThrowBadInput(
            fmt::format("subgraph '{}': tensor {} ('{}') has shape_signature dimension {}", name, t, tensor.name, d));
    if (tensor.is_const() && !tensor.sparsity) {
      size_t element_size = DTypeSize(tensor.dtype);
      if (element_size > 0 && tensor.data->size() != static_cast<size_t>(elements) * element_size)
        ThrowBadInput(fmt::format("subgraph '{}': constant tensor {} ('{}') holds {} bytes but its {} shape needs {}",
                                  name, t, tensor.name, tensor.data->size(), DTypeName(tensor.dtype),
                                  static_cast<size_t>(elements) * element_size));
    }
  }
  g.TopologicalOrder();  // throws on a cycle
}

}  // namespace

void Subgraph::Validate() const {
  CheckStructure(*this);
  std::vector<bool> is_input(tensors.size(), false);
  for (int32_t t : inputs) is_input[t] = true;
  std::vector<int> producer(tensors.size(), -1);
  for (size_t i = 0; i < ops.size(); ++i)
    for (int32_t out : ops[i].outputs) producer[out] = static_cast<int>(i);
  // Every value read must come from somewhere: an op, the caller, a constant
  // or a variable's state. Anything else would be read uninitialised.
  auto has_source = [&](int32_t t) {
    return producer[t] >= 0 || is_input[t] || tensors[t].is_const() || tensors[t].is_variable;
  };
  for (size_t i = 0; i < ops.size(); ++i)
    for (int32_t in : ops[i].inputs)
      if (in >= 0 && !has_source(in))
        ThrowBadInput(
            fmt::format("subgraph '{}': op {} ({}) reads tensor {} ('{}'), which no op writes and which is "
                        "neither an input nor a constant",
                        name, i, ops[i].name(), in, tensors[in].name));
  for (size_t i = 0; i < outputs.size(); ++i)
    if (!has_source(outputs[i]))
      ThrowBadInput(
          fmt::format("subgraph '{}': graph output {} (tensor {} '{}') is written by no op and is neither "
                      "an input nor a constant",
                      name, i, outputs[i], tensors[outputs[i]].name));
  try {
    InferTensorSpecs(*this);  // options and shapes every op can trust; throws on a cycle too
  } catch (const Error& e) {
    throw Error(e.kind(), fmt::format("subgraph '{}': {}", name, e.what()));
  }
}

void Subgraph::CheckInvariants() const {
#ifdef GPUCLEAN_CHECK_INVARIANTS
  try {
    CheckStructure(*this);
  } catch (const Error& e) {
    ThrowInternal(std::string("graph edit broke an invariant: ") + e.what());
  }
#endif
}

void Model::Validate() const {
  if (subgraphs.empty()) ThrowBadInput("model has no subgraphs");
  for (const Subgraph& sg : subgraphs) sg.Validate();
  for (const SignatureDef& sig : signatures) {
    if (sig.subgraph < 0 || sig.subgraph >= static_cast<int32_t>(subgraphs.size()))
      ThrowBadInput(fmt::format("signature '{}' refers to subgraph {} but there are {}", sig.key, sig.subgraph,
                                subgraphs.size()));
    const auto n = static_cast<int32_t>(subgraphs[sig.subgraph].tensors.size());
    for (const auto* refs : {&sig.inputs, &sig.outputs})
      for (const TensorRef& ref : *refs)
        if (ref.tensor < 0 || ref.tensor >= n)
          ThrowBadInput(fmt::format("signature '{}' entry '{}' refers to tensor {} but subgraph {} has {}", sig.key,
                                    ref.name, ref.tensor, sig.subgraph, n));
  }
}

// ---------------------------------------------------------------- edits

int Subgraph::AddTensor(Tensor tensor) {
  tensors.push_back(std::move(tensor));
  return static_cast<int>(tensors.size()) - 1;
}

int Subgraph::AddConst(std::string name, DType dtype, std::vector<int32_t> shape, Bytes data) {
  Tensor t;
  t.name = std::move(name);
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.data = std::move(data);
  int index = AddTensor(std::move(t));
  CheckInvariants();
  return index;
}

int Subgraph::AddOp(Op op, int at) {
  if (at < 0 || at > static_cast<int>(ops.size())) at = static_cast<int>(ops.size());
  ops.insert(ops.begin() + at, std::move(op));
  CheckInvariants();
  return at;
}

void Subgraph::ReplaceOp(int index, Op op) {
  ops.at(index) = std::move(op);
  CheckInvariants();
}

void Subgraph::RemoveOp(int index) {
  ops.erase(ops.begin() + index);
  CheckInvariants();
}

void Subgraph::RewireConsumers(int from, int to) {
  if (from == to) return;
  for (Op& op : ops)
    for (int32_t& in : op.inputs)
      if (in == from) in = to;
  for (int32_t& out : outputs)
    if (out == from) out = to;
  CheckInvariants();
}

std::vector<int32_t> Subgraph::RemoveDeadTensors(const std::vector<int32_t>& also_keep) {
  std::vector<bool> used(tensors.size(), false);
  auto mark = [&](int32_t t) {
    if (t >= 0 && t < static_cast<int32_t>(tensors.size())) used[t] = true;
  };
  for (const Op& op : ops) {
    for (int32_t t : op.inputs) mark(t);
    for (int32_t t : op.outputs) mark(t);
    for (int32_t t : op.intermediates) mark(t);
  }
  for (int32_t t : inputs) mark(t);
  for (int32_t t : outputs) mark(t);
  for (int32_t t : also_keep) mark(t);

  std::vector<int32_t> remap(tensors.size(), -1);
  std::vector<Tensor> kept;
  for (size_t t = 0; t < tensors.size(); ++t) {
    if (!used[t]) continue;
    remap[t] = static_cast<int32_t>(kept.size());
    kept.push_back(std::move(tensors[t]));
  }
  tensors = std::move(kept);
  auto apply = [&](std::vector<int32_t>& list) {
    for (int32_t& t : list)
      if (t >= 0) t = remap[t];
  };
  for (Op& op : ops) {
    apply(op.inputs);
    apply(op.outputs);
    apply(op.intermediates);
  }
  apply(inputs);
  apply(outputs);
  CheckInvariants();
  return remap;
}

void Subgraph::SortOps() {
  std::vector<int> order = TopologicalOrder();
  std::vector<Op> sorted;
  sorted.reserve(ops.size());
  for (int i : order) sorted.push_back(std::move(ops[i]));
  ops = std::move(sorted);
}

int Model::RemoveDeadTensors(int subgraph) {
  Subgraph& sg = subgraphs.at(subgraph);
  std::vector<int32_t> keep;
  for (const SignatureDef& sig : signatures)
    if (sig.subgraph == subgraph) {
      for (const TensorRef& r : sig.inputs) keep.push_back(r.tensor);
      for (const TensorRef& r : sig.outputs) keep.push_back(r.tensor);
    }
  const size_t before = sg.tensors.size();
  std::vector<int32_t> remap = sg.RemoveDeadTensors(keep);
  for (SignatureDef& sig : signatures)
    if (sig.subgraph == subgraph) {
      for (TensorRef& r : sig.inputs) r.tensor = remap[r.tensor];
      for (TensorRef& r : sig.outputs) r.tensor = remap[r.tensor];
    }
  return static_cast<int>(before - sg.tensors.size());
}

void Model::NameSignature(const std::vector<std::string>& inputs, const std::vector<std::string>& outputs) {
  const Subgraph& g = main();
  auto refs = [&](const std::vector<int32_t>& tensors, const std::vector<std::string>& names, const char* what) {
    if (!names.empty() && names.size() != tensors.size())
      ThrowInternal(fmt::format("signature: {} {} name(s) for {} tensor(s)", names.size(), what, tensors.size()));
    std::vector<TensorRef> out;
    for (size_t k = 0; k < tensors.size(); ++k)
      out.push_back({names.empty() ? g.tensors.at(tensors[k]).name : names[k], tensors[k]});
    return out;
  };
  SignatureDef sig;
  sig.key = kDefaultSignatureKey;
  sig.subgraph = 0;
  sig.inputs = refs(g.inputs, inputs, "input");
  sig.outputs = refs(g.outputs, outputs, "output");
  signatures = {std::move(sig)};
}

}  // namespace gpuclean::ir
