#pragma once
// Shape inference: what dtype and shape each output of an operator has,
// following LiteRT's rules (SAME/VALID windows, numpy broadcasting, keep_dims,
// negative axes, strided-slice masks...). The builder names its outputs from
// it, and the interpreter reuses it to size tensors, so it also validates:
// inputs that LiteRT would reject, or that make no sense together, throw
// Error(kBadInput) with one line naming the op and the problem.
//
// Outputs that depend on the *values* of an input (a reshape's shape tensor,
// a transpose's permutation, reduction axes...) read them from the constant
// data; when that value is unknown, inference throws Error(kUnsupported).
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gpuclean/bytes.h"
#include "gpuclean/ir.h"

namespace gpuclean::ir {

struct TensorSpec {
  DType dtype = tfl::TensorType_FLOAT32;
  std::vector<int32_t> shape;

  bool operator==(const TensorSpec&) const = default;
};

// What inference may know about one operator input.
struct InputInfo {
  bool present = false;  // false for an omitted optional input (index -1)
  TensorSpec spec;
  // The tensor's contents when known: a constant, or a value the caller has
  // already computed. Dense, little-endian, C order.
  std::optional<Bytes> value;
};

// Output specs of `op` given what is known of its inputs. `declared_outputs`
// holds the dtypes the model already gives the outputs, if any; it is only
// consulted where the op itself does not fix the type (a CAST written
// without options, QUANTIZE).
std::vector<TensorSpec> InferOutputs(const Op& op, std::span<const InputInfo> inputs,
                                     std::span<const DType> declared_outputs = {});

// The same, reading input specs and constant data from the graph. Messages
// name the op by its index when `op` is one of `g.ops`.
std::vector<TensorSpec> InferOutputs(const Subgraph& g, const Op& op);

// The spec of every tensor of `g`, walking the ops in dataflow order: what
// the shape rules infer where they can, the declared spec where they cannot
// (no rule, or an output that depends on runtime values). Throws
// Error(kBadInput) "op N (TYPE): ..." for the first op whose options, shapes
// or constant inputs make no sense, so every consumer of a validated graph
// can trust them. Subgraph::Validate runs it.
std::vector<TensorSpec> InferTensorSpecs(const Subgraph& g);

// True when InferOutputs has a rule for this op (builtin code or custom code).
bool HasShapeRule(const Op& op);

// ---------------------------------------------------------------- helpers
// Shared with kernels and rewrites, so that everyone computes windows,
// broadcasts and slices the same way.

std::string FormatShape(std::span<const int32_t> shape);  // "[1,8,8,3]"

// numpy broadcasting; throws Error(kBadInput) when the shapes do not broadcast.
std::vector<int32_t> BroadcastShapes(std::span<const int32_t> a, std::span<const int32_t> b);

// `axis` in [-rank, rank) mapped to [0, rank); throws Error(kBadInput) naming
// `what` when out of range.
int NormalizeAxis(int64_t axis, int rank, const std::string& what);

// Output length of a sliding window along one spatial axis.
// SAME: ceil(in / stride). VALID: ceil((in - dilated_filter + 1) / stride).
int32_t WindowOutputSize(tfl::Padding padding, int32_t in, int32_t filter, int32_t stride, int32_t dilation = 1);

// Padding LiteRT applies before the first element along one spatial axis for
// a window producing `out` elements (an odd total puts the extra at the end).
struct WindowPadding {
  int32_t before = 0;
  int32_t after = 0;
};
WindowPadding ComputeWindowPadding(tfl::Padding padding, int32_t in, int32_t filter, int32_t stride, int32_t dilation,
                                   int32_t out);

// A strided slice resolved against a concrete input shape. Ellipsis and
// new-axis bits are already expanded: `effective_shape` is the input shape
// with a 1 at every new axis, and begin/end/stride have one entry per
// effective dimension (begin inclusive, end exclusive, both already clamped;
// with a negative stride end may be -1). Shrunk dimensions have size 1 there
// and are dropped from `output_shape`.
struct StridedSlicePlan {
  std::vector<int32_t> effective_shape;
  std::vector<int32_t> begin;
  std::vector<int32_t> end;
  std::vector<int32_t> stride;
  std::vector<bool> shrink;
  std::vector<int32_t> output_shape;
};
StridedSlicePlan PlanStridedSlice(std::span<const int32_t> input_shape, std::span<const int64_t> begin,
                                  std::span<const int64_t> end, std::span<const int64_t> strides,
                                  const tfl::StridedSliceOptionsT& options);

// Reduction axes normalised to [0, rank), sorted, duplicates removed.
std::vector<int> NormalizeAxes(std::span<const int64_t> axes, int rank, const std::string& what);

// MediaPipe custom operator options. These ops read their options as a raw
// TfLite*Params C struct (native-endian int32 fields), not as flexbuffers.
struct MediaPipeTransposeConvOptions {  // Convolution2DTransposeBias
  tfl::Padding padding = tfl::Padding_SAME;
  int32_t stride_w = 1;
  int32_t stride_h = 1;
};
struct MediaPipePoolOptions {  // MaxPoolingWithArgmax2D, MaxUnpooling2D
  tfl::Padding padding = tfl::Padding_SAME;
  int32_t stride_w = 1;
  int32_t stride_h = 1;
  int32_t filter_w = 1;
  int32_t filter_h = 1;
  tfl::ActivationFunctionType activation = tfl::ActivationFunctionType_NONE;
};
std::vector<uint8_t> EncodeMediaPipeOptions(const MediaPipeTransposeConvOptions& options);
std::vector<uint8_t> EncodeMediaPipeOptions(const MediaPipePoolOptions& options);
// Throw Error(kBadInput) when the bytes are too short or hold an unknown padding.
MediaPipeTransposeConvOptions DecodeMediaPipeTransposeConvOptions(std::span<const uint8_t> bytes);
MediaPipePoolOptions DecodeMediaPipePoolOptions(std::span<const uint8_t> bytes);

}  // namespace gpuclean::ir
