// The operator version a converter would write for an op: the lowest one
// whose kernel covers the features and types the op uses. LiteRT resolves
// kernels by (op, version) and refuses versions it never registered, and
// delegates gate support on versions, so these must be right rather than
// merely high enough. Only the rules that float32/int32/bool and the
// weight-only quantised graphs we build can reach are spelled out.
#include <algorithm>

#include "gpuclean/builder.h"

namespace gpuclean::builder {
namespace {

class Signature {
 public:
  Signature(const ir::Subgraph& g, const ir::Op& op) : g_(g), op_(op) {}

  bool has(int i) const { return i < static_cast<int>(op_.inputs.size()) && op_.inputs[i] >= 0; }
  DType in(int i) const { return has(i) ? g_.tensors[op_.inputs[i]].dtype : tfl::TensorType_FLOAT32; }
  int rank(int i) const { return has(i) ? g_.tensors[op_.inputs[i]].rank() : 0; }
  int max_rank() const {
    int r = 0;
    for (size_t i = 0; i < op_.inputs.size(); ++i) r = std::max(r, rank(static_cast<int>(i)));
    return r;
  }
  bool inputs_differ_in_shape() const {
    return has(0) && has(1) && g_.tensors[op_.inputs[0]].shape != g_.tensors[op_.inputs[1]].shape;
  }
  // Weights stored int8 with one scale per output channel.
  bool per_channel(int i) const { return has(i) && g_.tensors[op_.inputs[i]].quant.scale.size() > 1; }
  const ir::Subgraph& graph() const { return g_; }
  const ir::Op& op() const { return op_; }
  template <typename T>
  const T* options() const {
    return op_.options.type == tfl::BuiltinOptionsUnionTraits<T>::enum_value ? static_cast<const T*>(op_.options.value)
                                                                             : nullptr;
  }

 private:
  const ir::Subgraph& g_;
  const ir::Op& op_;
};

constexpr DType kF32 = tfl::TensorType_FLOAT32;
constexpr DType kI8 = tfl::TensorType_INT8;
constexpr DType kI32 = tfl::TensorType_INT32;
constexpr DType kI64 = tfl::TensorType_INT64;
constexpr DType kBool = tfl::TensorType_BOOL;

// The rules the op table's VERSION column names (src/ir/ops.def).
int OneVersion(const Signature&) { return 1; }

// CONV_2D
int Conv2DVersion(const Signature& s) {
  const bool grouped = s.rank(0) == 4 && s.rank(1) == 4 &&
                       s.graph().tensors[s.op().inputs[0]].shape[3] != s.graph().tensors[s.op().inputs[1]].shape[3];
  if (grouped) return 6;
  if (s.in(0) == kF32 && s.in(1) == kI8) return s.per_channel(1) ? 5 : 2;  // hybrid
  if (s.in(0) == kI8) return 3;
  return 1;
}

// DEPTHWISE_CONV_2D
int DepthwiseConv2DVersion(const Signature& s) {
  if (s.in(0) == kF32 && s.in(1) == kI8) return s.per_channel(1) ? 6 : 4;
  if (s.in(0) == kI8) return 3;
  const auto* o = s.options<tfl::DepthwiseConv2DOptionsT>();
  if (o && (o->dilation_w_factor != 1 || o->dilation_h_factor != 1)) return 2;
  return 1;
}

// TRANSPOSE_CONV
int TransposeConvVersion(const Signature& s) {
  const auto* o = s.options<tfl::TransposeConvOptionsT>();
  if (o && o->fused_activation_function != kNoActivation) return 4;
  if (s.has(3)) return 3;  // bias input
  if (s.in(1) == kI8) return 2;
  return 1;
}

// FULLY_CONNECTED
int FullyConnectedVersion(const Signature& s) {
  if (s.op().inputs.size() == 2) return 6;  // no bias slot at all
  const auto* o = s.options<tfl::FullyConnectedOptionsT>();
  if (o && o->keep_num_dims) return 5;
  if (s.in(0) == kI8) return 4;
  if (s.in(0) == kF32 && s.in(1) == kI8) return o && o->asymmetric_quantize_inputs ? 9 : 3;
  return 1;
}

// STRIDED_SLICE
int StridedSliceVersion(const Signature& s) {
  const auto* o = s.options<tfl::StridedSliceOptionsT>();
  if (o && o->offset) return 8;
  if (o && (o->ellipsis_mask != 0 || o->new_axis_mask != 0)) return 6;
  if (s.rank(0) > 4) return 4;
  if (s.in(0) == kBool) return 3;
  if (s.in(0) == kI8) return 2;
  return 1;
}

// TRANSPOSE
int TransposeVersion(const Signature& s) {
  if (s.rank(0) > 5) return 6;
  if (s.rank(0) > 4) return 4;
  if (s.in(0) == kBool) return 3;
  if (s.in(0) == kI8) return 2;
  return 1;
}

// SLICE
int SliceVersion(const Signature& s) {
  if (s.rank(0) > 4) return 5;
  if (s.in(0) == kI8) return 2;
  return 1;
}

// PAD, PADV2
int PadVersion(const Signature& s) {
  if (s.rank(0) > 4) return 4;
  if (s.in(0) == kI8) return 2;
  return 1;
}

// RESIZE_BILINEAR
int ResizeBilinearVersion(const Signature& s) {
  const auto* o = s.options<tfl::ResizeBilinearOptionsT>();
  if (o && o->half_pixel_centers) return 3;
  if (s.in(0) == kI8) return 2;
  return 1;
}

// RESIZE_NEAREST_NEIGHBOR
int ResizeNearestVersion(const Signature& s) {
  const auto* o = s.options<tfl::ResizeNearestNeighborOptionsT>();
  if (o && (o->half_pixel_centers || o->align_corners)) return 3;
  if (s.in(0) == kI8) return 2;
  return 1;
}

// MAXIMUM, MINIMUM
int MinMaxVersion(const Signature& s) {
  if (s.inputs_differ_in_shape() && s.max_rank() > 4) return 3;
  if (s.in(0) == kI8) return 2;
  return 1;
}

// ADD
int AddVersion(const Signature& s) {
  if (s.in(0) == kI64) return 4;
  if (s.in(0) == kI8) return 2;
  return 1;
}

// SUB
int SubVersion(const Signature& s) {
  if (s.in(0) == kI64) return 4;
  if (s.inputs_differ_in_shape() && s.max_rank() > 4) return 3;
  if (s.in(0) == kI8) return 2;
  return 1;
}

// MUL
int MulVersion(const Signature& s) {
  if (s.in(0) == kI64) return 5;
  if (s.in(0) == kI8) return 2;
  return 1;
}

// DIV
int DivVersion(const Signature& s) { return s.inputs_differ_in_shape() && s.max_rank() > 4 ? 2 : 1; }

// GATHER
int GatherVersion(const Signature& s) {
  if (s.in(1) == tfl::TensorType_INT16) return 6;
  const auto* o = s.options<tfl::GatherOptionsT>();
  if (o && o->batch_dims != 0) return 5;
  if (s.in(0) == kBool) return 3;
  if (s.in(0) == kI8) return 2;
  return 1;
}

// GATHER_ND
int GatherNdVersion(const Signature& s) { return s.in(0) == kBool ? 5 : 1; }

// SPLIT: the data is input 1; input 0 is the axis.
int SplitVersion(const Signature& s) {
  if (s.in(1) == kI32) return 3;
  if (s.in(1) == kI8) return 2;
  return 1;
}

// ABS
int AbsVersion(const Signature& s) {
  if (s.in(0) == kI32) return 5;
  if (s.in(0) == kI8) return 2;
  return 1;
}

// FLOOR_DIV
int FloorDivVersion(const Signature& s) { return s.in(0) == kF32 ? 2 : 1; }

// QUANTIZE
int QuantizeVersion(const Signature& s) {
  if (s.op().outputs.empty()) return 1;
  const ir::Tensor& out = s.graph().tensors[s.op().outputs[0]];
  if (out.quant.scale.size() > 1) return 3;  // per channel
  return out.dtype == tfl::TensorType_INT16 ? 2 : 1;
}

// DEQUANTIZE
int DequantizeVersion(const Signature& s) {
  if (s.in(0) == tfl::TensorType_FLOAT16 || s.in(0) == tfl::TensorType_INT16) return 3;
  if (s.in(0) == kI8) return s.per_channel(0) ? 5 : 2;
  return 1;
}

// BROADCAST_TO: version 1 was withdrawn together with its old op code.
int BroadcastToVersion(const Signature& s) { return s.in(0) == kI8 ? 3 : 2; }

// CAST
int CastVersion(const Signature& s) {
  const DType out = s.op().outputs.empty() ? kF32 : s.graph().tensors[s.op().outputs[0]].dtype;
  auto either = [&](DType t) { return s.in(0) == t || out == t; };
  if (either(tfl::TensorType_FLOAT64) || either(tfl::TensorType_FLOAT16)) return 5;
  if (either(tfl::TensorType_UINT16)) return 4;
  if (either(kI8)) return 3;
  if (either(tfl::TensorType_UINT32)) return 2;
  return 1;
}

// SELECT
int SelectVersion(const Signature& s) {
  if (s.max_rank() == 5) return 3;
  if (s.in(1) == kI8) return 2;
  return 1;
}

// ARG_MAX, ARG_MIN, UNPACK
int BoolOrInt8Version(const Signature& s) {
  if (s.in(0) == kBool) return 3;
  if (s.in(0) == kI8) return 2;
  return 1;
}

}  // namespace

int DefaultOpVersion(const ir::Subgraph& g, const ir::Op& op) {
  const Signature s(g, op);
  switch (op.code) {
#define GPUCLEAN_OP(CODE, FAMILY, RANK_RULE, KERNEL, FLAGS, OPTIONS, VERSION) \
  case tfl::BuiltinOperator_##CODE:                                           \
    return VERSION##Version(s);
#include "ir/ops.def"
#undef GPUCLEAN_OP
    default: return 1;
  }
}

}  // namespace gpuclean::builder
