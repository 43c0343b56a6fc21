#pragma once
// Small ONNX models for tests, built with the ONNX protobuf classes (no
// Python): the op-lowering tests convert them and prove them against
// onnxruntime.
//
//   OnnxTestModel m;
//   m.Input("x", {1, 3, 8, 8});
//   m.InitF32("w", {4, 3, 3, 3}, RandomValues(108, 1));
//   m.Node("Conv", {"x", "w"}, {"y"}).Ints("pads", {1, 1, 1, 1});
//   m.Output("y");
//   std::string path = m.Write(dir / "conv.onnx");
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gpuclean/convert.h"
#include "gpuclean/ir.h"
#include "support/test_support.h"

namespace gpuclean::testing {

// ONNX element types used by tests.
constexpr int kOnnxFloat = 1;
constexpr int kOnnxInt32 = 6;
constexpr int kOnnxInt64 = 7;
constexpr int kOnnxBool = 9;
constexpr int kOnnxFloat16 = 10;
constexpr int kOnnxUint8 = 2;
constexpr int kOnnxInt8 = 3;

class OnnxTestModel {
 public:
  explicit OnnxTestModel(int opset = 17);
  ~OnnxTestModel();
  OnnxTestModel(OnnxTestModel&&) noexcept;
  OnnxTestModel& operator=(OnnxTestModel&&) noexcept;

  class NodeRef {
   public:
    NodeRef& Int(const std::string& name, int64_t v);
    NodeRef& Float(const std::string& name, float v);
    NodeRef& Str(const std::string& name, const std::string& v);
    NodeRef& Ints(const std::string& name, const std::vector<int64_t>& v);
    NodeRef& Floats(const std::string& name, const std::vector<float>& v);
    NodeRef& TensorF32(const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& v);
    NodeRef& TensorI64(const std::string& name, const std::vector<int64_t>& dims, const std::vector<int64_t>& v);
    // A graph attribute (an If branch, a Loop body): `body`'s graph, its
    // inputs, outputs, initializers and nodes.
    NodeRef& Graph(const std::string& name, const OnnxTestModel& body);

   private:
    friend class OnnxTestModel;
    explicit NodeRef(void* node) : node_(node) {}
    void* node_;
  };

  // dims: -1 gives a symbolic dimension ("d<i>").
  void Input(const std::string& name, const std::vector<int64_t>& dims, int elem_type = kOnnxFloat);
  // No shape: shape inference fills it.
  void Output(const std::string& name, int elem_type = kOnnxFloat);
  void InitF32(const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& values);
  // Stored as float16 (each value rounded to the nearest half).
  void InitF16(const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& values);
  void InitI64(const std::string& name, const std::vector<int64_t>& dims, const std::vector<int64_t>& values);
  // An 8-, 16- or 32-bit integer initializer (elem_type kOnnxUint8, kOnnxInt8,
  // kOnnxInt32, ...), its values in int32_data as the format stores them.
  void InitInts(const std::string& name, int elem_type, const std::vector<int64_t>& dims,
                const std::vector<int32_t>& values);
  NodeRef Node(const std::string& op_type, const std::vector<std::string>& inputs,
               const std::vector<std::string>& outputs, const std::string& domain = "");
  // Moves every initializer's bytes into `location` (relative to the model's
  // folder, `folder`) as external data, the way large exports store weights.
  void MoveWeightsToExternalData(const std::string& folder, const std::string& location);
  std::string Serialize() const;
  // Writes the model and returns `path`.
  std::string Write(const std::string& path) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Deterministic values in [-scale, scale).
std::vector<float> RandomValues(size_t n, uint32_t seed, float scale = 1.0f);

// `m` written to `dir`/`file` and converted with --target none (the proof
// against onnxruntime on).
convert::Result ConvertWithoutTarget(const OnnxTestModel& m, const std::string& file, TempDir& dir);

// The first constant tensor an op of `code` reads at input `slot`, or
// nullptr: where a test corrupts a converted model's weight.
ir::Tensor* FirstConstInput(ir::Model& m, tfl::BuiltinOperator code, int slot);

}  // namespace gpuclean::testing
