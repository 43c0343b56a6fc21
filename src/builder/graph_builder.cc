// GraphBuilder's core: tensors, constants, the generic Op()/Custom() that
// every typed method goes through, and Finish().
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstring>

#include "gpuclean/builder.h"
#include "gpuclean/error.h"
#include "gpuclean/half.h"

namespace gpuclean::builder {
namespace {

int64_t ElementCount(const Shape& shape) {
  int64_t n = 1;
  for (int32_t d : shape) {
    if (d < 0) ThrowBadInput(fmt::format("shape {} has a negative dimension", ir::FormatShape(shape)));
    n *= d;
  }
  return n;
}

void ExpectCount(const std::string& name, const Shape& shape, size_t count) {
  if (static_cast<int64_t>(count) != ElementCount(shape))
    ThrowBadInput(fmt::format("constant '{}': {} values for shape {}", name, count, ir::FormatShape(shape)));
}

template <typename T>
Bytes BytesOf(const std::vector<T>& values) {
  return Bytes::FromValues(std::span<const T>(values));
}

std::string LowerCase(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace

GraphBuilder::GraphBuilder(std::string graph_name) { graph_.name = std::move(graph_name); }

GraphBuilder GraphBuilder::Extend(ir::Subgraph graph, std::string name_prefix) {
  GraphBuilder b(graph.name);
  b.graph_ = std::move(graph);
  b.name_prefix_ = std::move(name_prefix);
  return b;
}

ir::Subgraph GraphBuilder::Release() {
  ir::Subgraph out = std::move(graph_);
  graph_ = ir::Subgraph();
  graph_.name = out.name;
  return out;
}

// ---------------------------------------------------------------- tensors

int GraphBuilder::Input(std::string name, DType dtype, Shape shape) {
  ElementCount(shape);
  ir::Tensor t;
  t.name = std::move(name);
  t.dtype = dtype;
  t.shape = std::move(shape);
  const int index = graph_.AddTensor(std::move(t));
  graph_.inputs.push_back(index);
  return index;
}

int GraphBuilder::Const(std::string name, DType dtype, Shape shape, Bytes data) {
  const int64_t elements = ElementCount(shape);
  // The format marks a constant by a non-empty buffer, so an empty one would
  // come back from a file as a dangling non-constant tensor.
  if (elements == 0) ThrowBadInput(fmt::format("constant '{}' has no elements; the format cannot store it", name));
  const size_t element_size = ir::DTypeSize(dtype);
  if (element_size == 0 || data.size() != static_cast<size_t>(elements) * element_size)
    ThrowBadInput(fmt::format("constant '{}': {} bytes do not fit {} {}", name, data.size(), ir::DTypeName(dtype),
                              ir::FormatShape(shape)));
  return graph_.AddConst(std::move(name), dtype, std::move(shape), std::move(data));
}

int GraphBuilder::ConstF32(std::string name, Shape shape, const std::vector<float>& values) {
  ExpectCount(name, shape, values.size());
  return Const(std::move(name), tfl::TensorType_FLOAT32, std::move(shape), BytesOf(values));
}

int GraphBuilder::ConstI32(std::string name, Shape shape, const std::vector<int32_t>& values) {
  ExpectCount(name, shape, values.size());
  return Const(std::move(name), tfl::TensorType_INT32, std::move(shape), BytesOf(values));
}

int GraphBuilder::ConstBool(std::string name, Shape shape, const std::vector<bool>& values) {
  ExpectCount(name, shape, values.size());
  std::vector<uint8_t> bytes(values.begin(), values.end());
  return Const(std::move(name), tfl::TensorType_BOOL, std::move(shape), Bytes::Own(std::move(bytes)));
}

int GraphBuilder::ConstF16FromF32(std::string name, Shape shape, const std::vector<float>& values) {
  ExpectCount(name, shape, values.size());
  std::vector<uint16_t> halves;
  halves.reserve(values.size());
  for (float v : values) halves.push_back(FloatToHalf(v));
  return Const(std::move(name), tfl::TensorType_FLOAT16, std::move(shape), BytesOf(halves));
}

int GraphBuilder::ConstInt8(std::string name, Shape shape, const std::vector<int8_t>& values, float scale,
                            int64_t zero_point) {
  ExpectCount(name, shape, values.size());
  const int index = Const(std::move(name), tfl::TensorType_INT8, std::move(shape), BytesOf(values));
  graph_.tensors[index].quant.scale = {scale};
  graph_.tensors[index].quant.zero_point = {zero_point};
  return index;
}

int GraphBuilder::ConstInt8PerChannel(std::string name, Shape shape, const std::vector<int8_t>& values,
                                      const std::vector<float>& scales, int32_t axis) {
  ExpectCount(name, shape, values.size());
  if (axis < 0 || axis >= static_cast<int32_t>(shape.size()) || static_cast<int32_t>(scales.size()) != shape[axis])
    ThrowBadInput(
        fmt::format("constant '{}': {} scales for axis {} of {}", name, scales.size(), axis, ir::FormatShape(shape)));
  const int index = Const(std::move(name), tfl::TensorType_INT8, std::move(shape), BytesOf(values));
  ir::Quantization& q = graph_.tensors[index].quant;
  q.scale = scales;
  q.zero_point.assign(scales.size(), 0);
  q.quantized_dimension = axis;
  return index;
}

int GraphBuilder::ConstSparseF32(std::string name, Shape shape, const std::vector<float>& dense_values) {
  if (shape.size() != 2) ThrowBadInput(fmt::format("sparse constant '{}' must be 2-D", name));
  ExpectCount(name, shape, dense_values.size());
  // CSR: row r's stored values are nonzeros[segments[r], segments[r + 1]).
  tfl::Int32VectorT segments, columns;
  std::vector<float> nonzeros;
  segments.values.push_back(0);
  for (int32_t r = 0; r < shape[0]; ++r) {
    for (int32_t c = 0; c < shape[1]; ++c) {
      const float v = dense_values[static_cast<size_t>(r) * shape[1] + c];
      if (v == 0.0f) continue;
      nonzeros.push_back(v);
      columns.values.push_back(c);
    }
    segments.values.push_back(static_cast<int32_t>(nonzeros.size()));
  }
  if (nonzeros.empty()) ThrowBadInput(fmt::format("sparse constant '{}' has no nonzero values", name));

  tfl::SparsityParametersT sparsity;
  sparsity.traversal_order = {0, 1};
  auto rows = std::make_unique<tfl::DimensionMetadataT>();
  rows->format = tfl::DimensionType_DENSE;
  rows->dense_size = shape[0];
  auto cols = std::make_unique<tfl::DimensionMetadataT>();
  cols->format = tfl::DimensionType_SPARSE_CSR;
  cols->array_segments.Set(std::move(segments));
  cols->array_indices.Set(std::move(columns));
  sparsity.dim_metadata.push_back(std::move(rows));
  sparsity.dim_metadata.push_back(std::move(cols));

  ir::Tensor t;
  t.name = std::move(name);
  t.dtype = tfl::TensorType_FLOAT32;
  t.shape = std::move(shape);
  t.data = BytesOf(nonzeros);
  t.sparsity = std::move(sparsity);
  return graph_.AddTensor(std::move(t));
}

void GraphBuilder::Output(int tensor) {
  CheckTensor(tensor, "graph output");
  if (graph_.IsGraphOutput(tensor)) ThrowBadInput(fmt::format("tensor {} is already a graph output", tensor));
  graph_.outputs.push_back(tensor);
}

void GraphBuilder::CheckTensor(int tensor, const char* what) const {
  if (tensor < 0 || tensor >= static_cast<int>(graph_.tensors.size()))
    ThrowBadInput(fmt::format("{} refers to tensor {}, but the graph has {}", what, tensor, graph_.tensors.size()));
}

// ---------------------------------------------------------------- ops

std::string GraphBuilder::NextOpName(const std::string& op_name) const {
  return fmt::format("{}{}_{}", name_prefix_, LowerCase(op_name), graph_.ops.size());
}

std::vector<int> GraphBuilder::Op(tfl::BuiltinOperator code, std::vector<int> inputs, tfl::BuiltinOptionsUnion options,
                                  int version) {
  if (code == tfl::BuiltinOperator_CUSTOM) ThrowBadInput("use Custom() for custom ops");
  for (int in : inputs)
    if (in != kNoInput) CheckTensor(in, "op input");
  ir::Op op;
  op.code = code;
  op.inputs.assign(inputs.begin(), inputs.end());
  op.options = std::move(options);
  const std::vector<TensorSpec> outputs = ir::InferOutputs(graph_, op);
  const std::string base = NextOpName(op.name());
  for (size_t k = 0; k < outputs.size(); ++k) {
    ir::Tensor t;
    t.name = k == 0 ? base : fmt::format("{}:{}", base, k);
    t.dtype = outputs[k].dtype;
    t.shape = outputs[k].shape;
    op.outputs.push_back(graph_.AddTensor(std::move(t)));
  }
  op.version = version == kAutoVersion ? DefaultOpVersion(graph_, op) : version;
  std::vector<int> result(op.outputs.begin(), op.outputs.end());
  graph_.AddOp(std::move(op));
  return result;
}

std::vector<int> GraphBuilder::Custom(const std::string& code, std::vector<int> inputs,
                                      std::vector<uint8_t> custom_options, const std::vector<TensorSpec>& outputs) {
  for (int in : inputs)
    if (in != kNoInput) CheckTensor(in, "op input");
  ir::Op op;
  op.code = tfl::BuiltinOperator_CUSTOM;
  op.custom_code = code;
  op.inputs.assign(inputs.begin(), inputs.end());
  op.custom_options = std::move(custom_options);
  const std::string base = NextOpName(code);
  for (size_t k = 0; k < outputs.size(); ++k) {
    ir::Tensor t;
    t.name = k == 0 ? base : fmt::format("{}:{}", base, k);
    t.dtype = outputs[k].dtype;
    t.shape = outputs[k].shape;
    op.outputs.push_back(graph_.AddTensor(std::move(t)));
  }
  std::vector<int> result(op.outputs.begin(), op.outputs.end());
  graph_.AddOp(std::move(op));
  return result;
}

std::vector<int> GraphBuilder::Custom(const std::string& code, std::vector<int> inputs,
                                      std::vector<uint8_t> custom_options) {
  ir::Op probe;
  probe.code = tfl::BuiltinOperator_CUSTOM;
  probe.custom_code = code;
  probe.inputs.assign(inputs.begin(), inputs.end());
  probe.custom_options = custom_options;
  for (int in : inputs)
    if (in != kNoInput) CheckTensor(in, "op input");
  return Custom(code, std::move(inputs), std::move(custom_options), ir::InferOutputs(graph_, probe));
}

int GraphBuilder::Single(tfl::BuiltinOperator code, std::vector<int> inputs, tfl::BuiltinOptionsUnion options) {
  std::vector<int> outputs = Op(code, std::move(inputs), std::move(options));
  if (outputs.size() != 1)
    ThrowInternal(fmt::format("{} made {} outputs where one was expected", ir::BuiltinName(code), outputs.size()));
  return outputs[0];
}

int GraphBuilder::AttributeConst(tfl::BuiltinOperator code, const std::string& role, const std::vector<int32_t>& values,
                                 Shape shape) {
  return ConstI32(fmt::format("{}/{}", NextOpName(ir::BuiltinName(code)), role), std::move(shape), values);
}

int GraphBuilder::AttributeConst(tfl::BuiltinOperator code, const std::string& role,
                                 const std::vector<int32_t>& values) {
  return AttributeConst(code, role, values, {static_cast<int32_t>(values.size())});
}

ir::Model GraphBuilder::Finish() {
  if (graph_.outputs.empty()) ThrowBadInput(fmt::format("graph '{}' has no outputs", graph_.name));
  ir::Model model;
  model.description = "gpuclean builder";
  std::string name = graph_.name;
  model.subgraphs.push_back(std::move(graph_));
  graph_ = ir::Subgraph();
  graph_.name = std::move(name);
  model.Validate();
  return model;
}

// ---------------------------------------------------------------- single-op graphs

ir::Model SingleOpGraph(const std::vector<Shape>& float_inputs, const OpMaker& make_op) {
  GraphBuilder b;
  std::vector<int> inputs;
  for (size_t i = 0; i < float_inputs.size(); ++i)
    inputs.push_back(b.Input(fmt::format("input_{}", i), tfl::TensorType_FLOAT32, float_inputs[i]));
  for (int out : make_op(b, inputs)) b.Output(out);
  return b.Finish();
}

ir::Model SingleOpGraph(tfl::BuiltinOperator code, const std::vector<Shape>& float_inputs,
                        tfl::BuiltinOptionsUnion options) {
  return SingleOpGraph(float_inputs,
                       [&](GraphBuilder& b, const std::vector<int>& inputs) { return b.Op(code, inputs, options); });
}

}  // namespace gpuclean::builder
