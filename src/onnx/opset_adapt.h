#pragma once
// Bringing an ONNX model of any default-domain opset from 7 to 21 to the one
// opset the lowering reads (kCanonicalOpset), by the semantics of the opset
// the model declares. Ours rather than libonnx's version converter: that one
// needs shapes its inference cannot always find (an opset-9 Softmax after a
// data-dependent Reshape fails its 12->13 adapter) and knows no opset above
// 17, which current PyTorch and onnxruntime tools write.
//
// Internal to src/onnx/ (it includes the ONNX protobuf classes).
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace gpuclean::onnx {

// Rewrites every default-domain node of `model` into its opset-17 form and
// sets the default-domain import to 17 (and the IR version to at most 8, the
// newest libonnx's checker reads; the types IR 9 and 10 add are refused as
// tensors anyway). Where the old semantic depends on a shape (Softmax before
// 13 flattens from `axis` on), shapes from a lenient inference of the
// original model are used when known, and a shape-free form (Flatten, the op,
// Reshape to Shape(x)) otherwise; the lowering folds the shape arithmetic.
// Throws Error(kUnsupported) naming the node for a semantic with no opset-17
// form (Resize with antialias, Pad "wrap", a non-constant ReduceMean axes
// input, ...). `path` names the model in messages.
// What a lenient ONNX shape inference of a model finds (libonnx reads ops
// above its opset by the newest schema it knows; what it cannot infer stays
// unknown): shapes (-1 for an unknown dimension) and element types by name.
struct ShapeKnowledge {
  std::map<std::string, std::vector<int64_t>> shapes;
  std::map<std::string, int> types;
  int fresh_names = 0;  // names the rewrites made up so far, across nested graphs
};
ShapeKnowledge LearnShapes(const ::onnx::ModelProto& model);

void AdaptToCanonicalOpset(::onnx::ModelProto& model, int64_t opset, const std::string& path);

}  // namespace gpuclean::onnx
