#pragma once
// The ONNX model as the lowering sees it: plain structs, no protobuf. Import
// (onnx_model.cc) is the only code that includes ONNX or protobuf headers: it
// parses the file (external data kept inside the model's folder), sorts it
// topologically, pins input shapes, adapts it to kCanonicalOpset, runs ONNX
// shape inference with data propagation and checks it with onnx::checker.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gpuclean/npy.h"

namespace gpuclean::onnx {

// Every op is lowered for this opset only; models of opsets kFirstAdaptedOpset
// to kMaxOpset are brought to it on import by our own adaptation
// (opset_adapt.h), older ones first to kFirstAdaptedOpset by libonnx's
// version converter. What has no opset-17 form is refused (kUnsupported).
constexpr int kCanonicalOpset = 17;
constexpr int kMinOpset = 1;
constexpr int kFirstAdaptedOpset = 7;
constexpr int kMaxOpset = 21;

using Dims = std::vector<int64_t>;

struct Graph;

struct Attribute {
  enum Kind { kInt, kFloat, kString, kInts, kFloats, kStrings, kTensor, kGraph, kOther };
  Kind kind = kOther;
  int64_t i = 0;
  float f = 0;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<float> floats;
  std::vector<std::string> strings;
  std::optional<npy::Array> tensor;
  std::shared_ptr<const Graph> graph;  // kGraph: an If branch or a Loop body
};

struct Node {
  int index = 0;  // position in the (topologically sorted) graph
  std::string name;
  std::string op_type;
  std::string domain;               // "" for the default domain
  std::vector<std::string> inputs;  // "" marks an omitted optional input
  std::vector<std::string> outputs;
  std::map<std::string, Attribute> attributes;
  // "Conv 'name'" or "Conv #12" for messages.
  std::string Label() const;
};

struct ValueInfo {
  std::string name;
  ir::DType dtype = tfl::TensorType_FLOAT32;
  bool dtype_known = true;  // false for element types gpuclean does not convert
  bool has_shape = false;
  Dims shape;                           // -1 for an unknown dimension
  std::vector<std::string> dim_params;  // symbolic names, "" where none
};

struct Graph {
  std::string source;  // the file, for messages
  int64_t opset = 0;   // after conversion
  int64_t original_opset = 0;
  std::string producer;
  std::vector<Node> nodes;
  std::map<std::string, npy::Array> initializers;
  std::vector<ValueInfo> inputs;  // initializers excluded
  std::vector<ValueInfo> outputs;
  std::map<std::string, ValueInfo> value_info;  // inferred shapes, by tensor name
  // Graph inputs fixed at convert time (--input-value): initializers now,
  // still fed to onnxruntime, which runs the original model.
  std::vector<std::pair<std::string, npy::Array>> pinned_inputs;
  // The values the file's own top-level nodes write: what onnxruntime can
  // expose (the opset, contrib and quantized rewrites make up others).
  std::set<std::string> file_values;
  // Quantized ops were expanded into float fake-quant (quantized_ops.h).
  int quantized_nodes = 0;
};

struct ImportOptions {
  // NAME=dims pins for graph inputs with unknown or symbolic dimensions.
  std::map<std::string, Dims> input_shapes;
  // NAME=values: the input becomes a constant of its declared dtype and
  // shape (every dimension known), so what depends on it folds.
  std::map<std::string, std::vector<double>> input_values;
};

// Throws Error(kBadInput) naming the file for anything malformed, and
// Error(kUnsupported) for valid models we cannot take (unknown domains,
// opsets outside [kMinOpset, kMaxOpset], dynamic dims left unknown).
Graph Import(const std::string& path, const ImportOptions& options = {});

// Import from the bytes of an .onnx file; `source` names it in messages.
// Same checks as Import, but nothing is read from disk: a tensor stored as
// external data is refused (kBadInput).
Graph ImportBytes(const std::string& bytes, const std::string& source, const ImportOptions& options = {});

// Writes a copy of the model at `path` whose graph also outputs `names`
// (intermediate tensors), so a runtime can be asked for them. Shapes and
// types come from shape inference; names with none are skipped.
void WriteWithOutputs(const std::string& path, const std::vector<std::string>& names, const std::string& out_path);

// ONNX TensorProto data type number -> our dtype; throws kUnsupported.
ir::DType DTypeFromOnnx(int onnx_type, const std::string& what);
// ONNX TensorProto data type number -> its name ("FLOAT", "INT64", ...).
std::string OnnxTypeName(int onnx_type);

// A serialised TensorProto file (the ONNX backend tests' input_K.pb and
// output_K.pb) as an array: float64 becomes float32 as everywhere in import.
// Throws Error(kBadInput) for a file that is not a TensorProto and
// Error(kUnsupported) for element types gpuclean does not read (strings...).
npy::Array ReadTensorProto(const std::string& path);

// What a model holds, read without checking, converting or inferring
// anything (for test selection): op types in graph order ("domain:Op" for
// other domains), ONNX element types of the graph inputs (initializers
// excluded) and outputs (0 when not a tensor), and the default opset.
struct ModelSummary {
  std::vector<std::string> op_types;
  std::vector<int> input_types, output_types;
  int64_t opset = 0;
};
ModelSummary Summarize(const std::string& path);

}  // namespace gpuclean::onnx
