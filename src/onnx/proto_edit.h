#pragma once
// Small tools for rewriting ONNX graphs node by node before they are
// checked and lowered (the opset adaptation, the contrib-op expansion):
// attribute access, constant initializers, and a writer that collects the
// nodes and initializers a rewrite emits. Internal to src/onnx/.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "onnx/opset_adapt.h"

namespace gpuclean::onnx {

// `text` as one line of at most 400 characters: names inside a model may
// hold newlines, and every error is one line.
std::string OneLine(std::string text);
// "Op 'name'" (or "Op 'first output'") for messages.
std::string NodeLabel(const ::onnx::NodeProto& n);
// Whether a node of `g`, or of a graph nested in one of its attributes
// (If/Loop/Scan bodies), satisfies `matches`.
bool AnyNode(const ::onnx::GraphProto& g, const std::function<bool(const ::onnx::NodeProto&)>& matches);
const ::onnx::AttributeProto* FindAttr(const ::onnx::NodeProto& n, const std::string& name);
// Removes `name` and returns whether it was there.
bool RemoveAttr(::onnx::NodeProto& n, const std::string& name);
int64_t IntAttr(const ::onnx::NodeProto& n, const std::string& name, int64_t fallback);
float FloatAttr(const ::onnx::NodeProto& n, const std::string& name, float fallback);
std::string StrAttr(const ::onnx::NodeProto& n, const std::string& name, const std::string& fallback);
std::vector<int64_t> IntsAttr(const ::onnx::NodeProto& n, const std::string& name);
void SetInt(::onnx::NodeProto& n, const std::string& name, int64_t v);
void SetFloat(::onnx::NodeProto& n, const std::string& name, float v);
void SetStr(::onnx::NodeProto& n, const std::string& name, const std::string& v);
void SetInts(::onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v);
// The values of an INT64/INT32 (FLOAT) tensor; empty for other types.
std::vector<int64_t> IntsOf(const ::onnx::TensorProto& t);
std::vector<float> FloatsOf(const ::onnx::TensorProto& t);

// Collects what a rewrite of one graph emits. Made-up names carry `tag`
// and a counter shared across nested graphs (ShapeKnowledge::fresh_names),
// so they never collide with the model's names or each other.
class NodeWriter {
 public:
  NodeWriter(ShapeKnowledge& known, std::string tag) : known_(known), tag_(std::move(tag)) {}

  std::string Fresh(const std::string& base);
  std::string IntsConst(const std::string& base, const std::vector<int64_t>& values);
  std::string FloatsConst(const std::string& base, const std::vector<int64_t>& dims, const std::vector<float>& values);
  std::string Scalar(const std::string& base, float v) { return FloatsConst(base, {}, {v}); }
  // A node named after `from`; the reference holds until the next Emit.
  ::onnx::NodeProto& Emit(const std::string& op, std::vector<std::string> inputs, std::vector<std::string> outputs,
                          const ::onnx::NodeProto& from);
  // y = 0.5 x (1 + erf(x / sqrt 2)), or with `tanh` the approximation
  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), in standard ops.
  void EmitGelu(const std::string& x, const std::string& y, bool tanh, const ::onnx::NodeProto& from);
  void Keep(::onnx::NodeProto n) { out_.push_back(std::move(n)); }
  // Replaces `graph`'s nodes with those emitted and adds the new initializers.
  void Commit(::onnx::GraphProto& graph);

  ShapeKnowledge& known() { return known_; }

 private:
  ShapeKnowledge& known_;
  std::string tag_;
  std::vector<::onnx::NodeProto> out_;
  std::vector<::onnx::TensorProto> initializers_;
};

}  // namespace gpuclean::onnx
