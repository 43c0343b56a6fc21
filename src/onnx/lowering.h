#pragma once
// Lowering ONNX nodes to TFLite ops. One function per ONNX op type (or tight
// family) in src/onnx/ops/, registered by name in registry.cc; each reads its
// node through a NodeContext and emits through the builder.
//
// Layout. Every value carries a permutation: the graph tensor holds the ONNX
// value transposed by `perm` (stored.shape[i] == onnx.shape[perm[i]]). Spatial
// ops ask for their input in NHWC (kToNhwc) and leave NHWC outputs;
// elementwise and axis-parametric ops work in whatever layout their input
// has, remapping axes; everything else asks for the ONNX layout. A TRANSPOSE
// is emitted only where a consumer needs a layout its producer did not give,
// once per (value, layout).
//
// Constants. A node whose inputs are all known at convert time is folded:
// lowered into a scratch graph and evaluated by the interpreter, so shape
// arithmetic (Shape/Gather/Concat/...) never reaches the written graph.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpuclean/builder.h"
#include "gpuclean/npy.h"
#include "gpuclean/valid_rows.h"
#include "onnx/onnx_model.h"

namespace gpuclean::onnx {

using Perm = std::vector<int>;
// NCHW -> NHWC for rank 4 (stored dim i is ONNX dim kToNhwc[i]).
extern const Perm kToNhwc;
// NCDHW -> NDHWC for rank 5 (video clips, volumes).
extern const Perm kToNdhwc;

Perm IdentityPerm(int rank);
bool IsIdentity(const Perm& perm);
Perm InversePerm(const Perm& perm);
// The permutation that turns a tensor stored in `from` into one stored in
// `to` (both relative to the same ONNX value).
Perm RelativePerm(const Perm& from, const Perm& to);
// ONNX axis -> position in a tensor stored with `perm`.
int StoredAxis(const Perm& perm, int onnx_axis);
Dims PermuteDims(const Dims& dims, const Perm& perm);
npy::Array TransposeHost(const npy::Array& a, const Perm& perm);
// Normalises a possibly negative axis; throws kBadInput when out of range.
int NormalizeAxis(int64_t axis, int rank, const std::string& what);

// A value whose length along one axis depends on the data (NonZero,
// NonMaxSuppression, a TopK of a computed k): the graph tensor holds the
// most rows that axis can have (Value::shape gives that bound), the valid
// ones first, and graph tensor `count` (int32 scalar) says how many are
// valid. Rows past the count hold whatever is cheapest; only ops that mix
// rows (reductions, selections, concatenation along the axis) look at it.
struct ValidRows {
  int axis = 0;  // ONNX axis
  int count = -1;
};

// What a run-time integer computed from such counts (the Shape of a padded
// value, arithmetic on it) can be, per element: what it sizes gets a static
// bound, and elements with lo == hi are exact.
struct IntRange {
  int64_t lo = 0;
  int64_t hi = 0;
  bool exact() const { return lo == hi; }
};

struct Value {
  std::string name;
  ir::DType dtype = tfl::TensorType_FLOAT32;  // as stored in the graph (int64 -> int32)
  Dims shape;                                 // the ONNX shape
  std::optional<npy::Array> constant;         // known at convert time (ONNX dtype)
  int tensor = -1;                            // graph tensor, layout `perm`
  Perm perm;                                  // empty: ONNX layout
  // Graph tensors of this value per layout (materialised constants,
  // transposes already emitted).
  std::map<Perm, int> layouts;
  std::optional<ValidRows> rows;  // padded along one axis (ValidRows)
  std::vector<IntRange> ranges;   // per element, for run-time integers from counts
};

class Lowerer;

class NodeContext {
 public:
  NodeContext(Lowerer& lowerer, const Node& node) : lowerer_(lowerer), node_(node) {}
  const Node& node() const { return node_; }
  builder::GraphBuilder& b();

  // ---- attributes
  bool HasAttr(const std::string& name) const { return node_.attributes.count(name) > 0; }
  int64_t Int(const std::string& name, int64_t fallback) const;
  float Float(const std::string& name, float fallback) const;
  std::string Str(const std::string& name, const std::string& fallback) const;
  std::vector<int64_t> Ints(const std::string& name, std::vector<int64_t> fallback = {}) const;
  std::vector<float> Floats(const std::string& name, std::vector<float> fallback = {}) const;
  const npy::Array& TensorAttr(const std::string& name) const;

  // ---- inputs
  int num_inputs() const { return static_cast<int>(node_.inputs.size()); }
  bool Has(int i) const { return i < num_inputs() && !node_.inputs[i].empty(); }
  const Value& In(int i) const;
  const Dims& Shape(int i) const { return In(i).shape; }
  int Rank(int i) const { return static_cast<int>(In(i).shape.size()); }
  ir::DType DType(int i) const { return In(i).dtype; }
  // Input i's element type as the ONNX graph declares it (float16 where the
  // graph stores it as float32).
  ir::DType OnnxDType(int i) const;
  bool RoundsHalfValues() const;
  bool IsConst(int i) const { return In(i).constant.has_value(); }
  // The input's value at convert time; Fail()s when it is computed at run time.
  const npy::Array& Const(int i) const;
  std::vector<int64_t> ConstInts(int i) const;
  std::vector<float> ConstFloats(int i) const;
  // The layout the input is stored in (empty for constants and ONNX layout).
  Perm PermOf(int i) const;
  // A graph tensor holding input i in the ONNX layout, or in `perm`.
  int Tensor(int i) { return TensorIn(i, {}); }
  int TensorIn(int i, const Perm& perm);
  // Inputs `indices` broadcast to a common rank and brought to one layout
  // (the first full-rank input's), for elementwise ops. Returns the tensors;
  // `perm` receives the layout of the result.
  std::vector<int> Aligned(const std::vector<int>& indices, Perm* perm);

  // Input i reshaped to the ONNX shape `shape`, read from its stored layout
  // when the reshape only merges or splits dimensions that are adjacent and
  // in order there (a convolution's NHWC output flattened to tokens needs no
  // transpose). Returns the tensor; `perm` receives its layout.
  int Reshaped(int i, const Dims& shape, Perm* perm);

  // ---- outputs
  int num_outputs() const { return static_cast<int>(node_.outputs.size()); }
  bool HasOutput(int k) const { return k < num_outputs() && !node_.outputs[k].empty(); }
  // Output k is graph tensor `tensor` holding the ONNX value transposed by `perm`.
  void Out(int k, int tensor, const Perm& perm = {});
  void OutConst(int k, npy::Array value);
  // Output k (already set by Out) is padded along `rows.axis`, or is a
  // run-time integer within `ranges` (data_dependent.cc).
  void SetRows(int k, const ValidRows& rows);
  void SetRanges(int k, std::vector<IntRange> ranges);
  // A value this lowering makes up (a masked copy of an input) under
  // `name`, for a node it lowers next with LowerNode.
  void Define(const std::string& name, int tensor, std::optional<ValidRows> rows = std::nullopt);

  // ---- nested graphs (If branches, Loop bodies), lowered in place: their
  // nodes read names of this scope and write into it.
  const Graph& Subgraph(const std::string& attribute) const;
  void LowerSubgraph(const Graph& g);
  // Lowers a node this lowering makes up (an Identity from a branch output
  // to the node's own, a Where between two branches) like any other.
  void LowerNode(const Node& node);
  // Any value of this scope by name (a branch's output, for instance).
  const Value& ValueOf(const std::string& name) const;

  // ---- constants for the graph
  int ConstF32(const Dims& shape, const std::vector<float>& values);
  int ConstI32(const Dims& shape, const std::vector<int32_t>& values);
  int ScalarF32(float v) { return ConstF32({}, {v}); }

  // Throws Error(kUnsupported) "<op> '<name>': <why>".
  [[noreturn]] void Fail(const std::string& why) const;
  [[noreturn]] void BadModel(const std::string& why) const;

 private:
  Lowerer& lowerer_;
  const Node& node_;
};

using LowerFn = std::function<void(NodeContext&)>;

struct Registry {
  std::map<std::string, LowerFn> rules;
  // Two lowerings for one op type is a bug (the later would win silently).
  void Add(const std::string& op_type, LowerFn fn);
};
// Every lowering, registered by the op files (registry.cc lists them).
const Registry& Rules();
// The lowerings of nodes that read a padded value or a ranged integer
// (ValidRows, IntRange): a node of another type there is refused, naming
// the value (data_dependent.cc).
const Registry& PaddedRules();
bool ReadsDataDependentLength(const std::map<std::string, Value>& values, const Node& node);
// Tensor `x` (ONNX layout) with its rows past the count zeroed, so a padded
// graph output reads the same on every runtime.
int ZeroPastCount(builder::GraphBuilder& b, int x, const ValidRows& rows);

struct LoweredGraph {
  ir::Model model;
  // Graph tensor name -> (ONNX name, layout) for every ONNX value that
  // survives as a tensor.
  struct TensorOrigin {
    std::string onnx_name;
    Perm perm;
    // An activation folded into the op before it (fold_activations.h): the
    // ONNX value that op computed, which no tensor holds any more.
    std::string fused_from;
    // A padded value (ValidRows): its ONNX axis and the graph tensor that
    // counts its valid rows; rows_axis -1 when it is not padded.
    int rows_axis = -1;
    std::string rows_count;
  };
  std::map<std::string, TensorOrigin> origins;
  std::map<std::string, int> folded;  // ONNX op type -> nodes evaluated at convert time
  // Graph outputs padded along one axis (ValidRows): the extra int32 output
  // that counts their valid rows, after the ONNX outputs.
  std::vector<PaddedOutput> padded_outputs;
  int64_t nodes_lowered = 0;
  // Float weights of an fp16 model kept as float16 (+ DEQUANTIZE): those
  // whose every value is a half, so the file is not twice the original.
  int half_weights_kept = 0;
  // Conv-like weights stored int8 (LowerOptions::int8_weights).
  int int8_weights = 0;
};

struct LowerOptions {
  bool nhwc_io = false;       // rank-4 image inputs/outputs in NHWC
  bool fp16_weights = false;  // float weights stored as float16 + DEQUANTIZE
  // Conv-like weights (CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV,
  // FULLY_CONNECTED) stored int8, one symmetric scale per tensor, + DEQUANTIZE.
  bool int8_weights = false;
  // Every float16 value of the ONNX graph rounded to half where it is
  // computed (a CAST pair), as a graph that stores it in float16 would.
  // onnxruntime's CPU provider computes most float16 nodes in float32 and
  // removes f32->f16->f32 Cast pairs, so the default lowering keeps float32;
  // the proof uses this variant to measure how much half storage moves the
  // outputs.
  bool round_half_values = false;
};

// Throws Error(kUnsupported) listing every op type without a lowering (with
// its count and first node).
void RequireSupported(const Graph& graph);

// Throws Error(kUnsupported) listing every op type without a lowering (with
// its count and first node) before emitting anything. Takes the weights:
// graph.initializers is empty afterwards, so they are held once.
LoweredGraph Lower(Graph& graph, const LowerOptions& options);
inline LoweredGraph Lower(Graph&& graph, const LowerOptions& options) { return Lower(graph, options); }

// The interface the NodeContext talks to; one per graph (and one per folded
// node, in a scratch graph).
class Lowerer {
 public:
  Lowerer(const Graph& graph, const LowerOptions& options, bool scratch);
  builder::GraphBuilder& builder() { return builder_; }
  std::map<std::string, Value>& values() { return values_; }
  Value& value(const std::string& name);
  int Materialize(Value& v, const Perm& perm);
  const Graph& graph() const { return graph_; }
  const LowerOptions& options() const { return options_; }
  // Lowers (or folds) each node in order; nested graphs come back here.
  void LowerNodes(const std::vector<Node>& nodes);
  void AddConstant(const std::string& name, npy::Array array);
  const std::map<std::string, int>& folded() const { return folded_; }
  int64_t nodes_lowered() const { return nodes_lowered_; }
  // Scratch graphs evaluate one node at convert time: int64 values that do
  // not fit int32 saturate there (INT64_MAX "to the end" sentinels) instead
  // of failing.
  bool scratch() const { return scratch_; }
  // Tensor names taken by ONNX values (the first value to reach a tensor
  // names it).
  std::map<int, std::string>& named() { return named_; }

 private:
  bool IsHalfExact(int tensor) const;
  // Rounds value `name` to half where onnxruntime would store it as float16.
  void RoundWhereOnnxStoresHalf(const std::string& name);

  const Graph& graph_;
  LowerOptions options_;
  bool scratch_;
  builder::GraphBuilder builder_;
  std::map<std::string, Value> values_;
  std::map<int, std::string> named_;
  std::map<std::string, int> folded_;
  int64_t nodes_lowered_ = 0;
};

}  // namespace gpuclean::onnx
