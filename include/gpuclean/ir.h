#pragma once
// The graph IR: the one mutable representation of a model. Everything above
// the format layer reads and edits models through these types.
//
// Typed operator options reuse the object-API structs that flatc generates
// from schema/tflite.fbs (tfl::Conv2DOptionsT, ...): they are plain value
// types, and reusing them means every option table of the format is covered
// and survives a read -> write round trip without a hand-kept copy.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuclean/bytes.h"
#include "gpuclean/tflite_generated.h"

namespace gpuclean::ir {

namespace tfl = ::gpuclean::tfl;

// Values match the format's TensorType enum.
using DType = tfl::TensorType;

// No tensor may hold more elements than this (4 TB of float32): larger
// shapes are refused as malformed before anything sizes memory from them.
constexpr int64_t kMaxTensorElements = int64_t{1} << 40;

// numpy-style lower-case name: "float32", "int8", "bool".
std::string_view DTypeName(DType dtype);
// Bytes per element; 0 for types without a fixed size (string, resource, variant, int4).
size_t DTypeSize(DType dtype);

struct Quantization {
  std::vector<float> scale;
  std::vector<int64_t> zero_point;
  std::vector<float> min;
  std::vector<float> max;
  int32_t quantized_dimension = 0;
  bool empty() const { return scale.empty() && zero_point.empty() && min.empty() && max.empty(); }
};

struct Tensor {
  std::string name;
  DType dtype = tfl::TensorType_FLOAT32;
  std::vector<int32_t> shape;
  // Empty when the model gives none; -1 marks a dynamic dimension.
  std::vector<int32_t> shape_signature;
  Quantization quant;
  // Present for sparse constants: data then holds only the stored values.
  std::optional<tfl::SparsityParametersT> sparsity;
  // Present for constants; a view into the mapped model file or owned bytes.
  std::optional<Bytes> data;
  bool is_variable = false;
  bool has_rank = false;

  bool is_const() const { return data.has_value(); }
  int rank() const { return static_cast<int>(shape.size()); }
  int64_t num_elements() const;
  bool is_dynamic() const;
};

struct Op {
  tfl::BuiltinOperator code = tfl::BuiltinOperator_ADD;
  std::string custom_code;  // for CUSTOM ops
  int32_t version = 1;
  tfl::BuiltinOptionsUnion options;
  tfl::BuiltinOptions2Union options2;
  std::vector<uint8_t> custom_options;  // raw bytes (flexbuffers for MediaPipe ops)
  tfl::CustomOptionsFormat custom_options_format = tfl::CustomOptionsFormat_FLEXBUFFERS;
  std::vector<int32_t> inputs;  // -1 marks an omitted optional input
  std::vector<int32_t> outputs;
  std::vector<int32_t> intermediates;
  std::vector<bool> mutating_variable_inputs;
  int32_t debug_metadata_index = -1;

  // "CONV_2D", or the custom code for custom ops.
  std::string name() const;
};

// Op name for a builtin code, e.g. "CONV_2D"; "BUILTIN_<n>" when unknown.
std::string BuiltinName(tfl::BuiltinOperator code);

struct TensorRef {
  std::string name;
  int32_t tensor = -1;
};

struct SignatureDef {
  std::string key;
  int32_t subgraph = 0;
  std::vector<TensorRef> inputs;
  std::vector<TensorRef> outputs;
};

struct Metadata {
  std::string name;
  Bytes data;
};

class Subgraph {
 public:
  std::string name;
  std::vector<Tensor> tensors;
  std::vector<Op> ops;
  std::vector<int32_t> inputs;
  std::vector<int32_t> outputs;
  int32_t debug_metadata_index = -1;

  // ---- queries (computed from the op list; cheap enough to call freely) ----
  // Index of the op that writes `tensor`, or -1 (graph input, constant, unused).
  int Producer(int tensor) const;
  // For each tensor, the index of the op that writes it, or -1: Producer
  // for every tensor at once.
  std::vector<int> Producers() const;
  // For each tensor, the ops that read it (an op appears once per tensor).
  std::vector<std::vector<int>> Consumers() const;
  // Ops in an order where every producer precedes its consumers. Throws
  // Error(kBadInput) on a cycle.
  std::vector<int> TopologicalOrder() const;
  bool IsGraphOutput(int tensor) const;
  bool IsGraphInput(int tensor) const;

  // ---- edits; each keeps the invariants (checked in debug builds) ----
  int AddTensor(Tensor tensor);
  int AddConst(std::string name, DType dtype, std::vector<int32_t> shape, Bytes data);
  // Inserts before position `at` (-1: append). Returns the new op's index.
  int AddOp(Op op, int at = -1);
  void ReplaceOp(int index, Op op);
  void RemoveOp(int index);
  // Every op input and graph output that reads `from` reads `to` instead.
  void RewireConsumers(int from, int to);
  // Drops tensors nothing references (no op, graph input or output, nor
  // `also_keep`) and renumbers the rest. Returns old index -> new index
  // (-1 for removed). Model::RemoveDeadTensors also renumbers signatures.
  std::vector<int32_t> RemoveDeadTensors(const std::vector<int32_t>& also_keep = {});
  // Puts ops in topological order (stable for already-ordered graphs).
  void SortOps();

  // Throws Error(kBadInput) naming the first broken invariant: indices in
  // range, one producer per tensor, no op writes a constant or graph input,
  // acyclic, constant sizes match shapes.
  void Validate() const;

 private:
  void CheckInvariants() const;
};

class Model {
 public:
  uint32_t version = 3;
  std::string description;
  std::vector<Subgraph> subgraphs;
  std::vector<Metadata> metadata;
  // Old-style list of metadata buffers (Model.metadata_buffer).
  std::vector<Bytes> metadata_buffers;
  std::vector<SignatureDef> signatures;

  // Where the model came from (for messages); empty for synthesised models.
  std::string source;
  // Reasons this model cannot be written back without losing something the
  // reader did not understand. Writing refuses while this is non-empty.
  std::vector<std::string> unpreservable;

  Subgraph& main() { return subgraphs.at(0); }
  // Subgraph::RemoveDeadTensors that keeps signature tensors and renumbers them.
  int RemoveDeadTensors(int subgraph);
  const Subgraph& main() const { return subgraphs.at(0); }
  void Validate() const;
  // Replaces the signatures with one, "serving_default", over the main
  // graph's inputs and outputs in order, named `inputs`/`outputs` (empty:
  // the tensors' names): what an app binds buffers by, in place of slot
  // order. Error(kInternal) for a count that does not match.
  void NameSignature(const std::vector<std::string>& inputs = {}, const std::vector<std::string>& outputs = {});
};

inline constexpr const char* kDefaultSignatureKey = "serving_default";

}  // namespace gpuclean::ir
