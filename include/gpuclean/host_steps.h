#pragma once
// Host steps: the small computations a pipeline runs on the CPU between two
// GPU graphs (docs/pipeline.md) - a top-K over proposal scores, a gather of
// the chosen queries, a box reparametrisation, sigmoid + threshold and NMS at
// the end. Each step has the semantics of the graph op (or op pattern) it
// replaces, checked against gpuclean's interpreter running that op
// (tests/pipeline/). Plain C++ on npy::Array with no interpreter behind it,
// so a mobile app's native layer can embed the same functions the desktop
// pipeline was proven with.
//
// Errors: Error(kBadInput) naming the step and what does not fit (shapes,
// dtypes, indices out of range); nothing is read or written out of bounds
// for any input values.
#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuclean/error.h"
#include "gpuclean/npy.h"

namespace gpuclean::pipeline {

// ------------------------------------------------------------ elementwise
// numpy broadcasting. float32, or int32 for add/sub/mul/maximum/minimum
// (both operands the same dtype). Replaces ADD, SUB, MUL, DIV, MAXIMUM,
// MINIMUM, POW.
enum class BinaryFn { kAdd, kSub, kMul, kDiv, kMaximum, kMinimum, kPow };
npy::Array Binary(BinaryFn fn, const npy::Array& a, const npy::Array& b);

// float32. Replaces LOGISTIC, EXP, LOG, RELU, TANH, NEG, ABS, SQRT.
enum class UnaryFn { kSigmoid, kExp, kLog, kRelu, kTanh, kNeg, kAbs, kSqrt };
npy::Array Unary(UnaryFn fn, const npy::Array& x);

// x * scale + offset (float32): the "memory = memory2 * 0.5" kind of step.
// Replaces MUL by a scalar then ADD of a scalar.
npy::Array Affine(const npy::Array& x, float scale, float offset);

// x > threshold as bool (GREATER against a scalar): masks and score cuts.
npy::Array Threshold(const npy::Array& x, float threshold);

// Comparisons with numpy broadcasting, bool out; float32 or int32 operands
// of one dtype. Replaces LESS, LESS_EQUAL, GREATER, GREATER_EQUAL, EQUAL,
// NOT_EQUAL (the index arithmetic between two host steps, e.g. wrapping
// negative indices).
enum class CompareFn { kLess, kLessEqual, kGreater, kGreaterEqual, kEqual, kNotEqual };
npy::Array Compare(CompareFn fn, const npy::Array& a, const npy::Array& b);

// condition ? a : b elementwise, the three broadcast together (bool
// condition; a and b one dtype). Replaces SELECT_V2 and SELECT.
npy::Array Select(const npy::Array& condition, const npy::Array& a, const npy::Array& b);

// CAST between float32, int32, int64, uint8 and bool: float to integer
// truncates toward zero (C++ conversion, as LiteRT's kernel); to bool is
// "not zero". A float that the integer type cannot hold is refused
// (Error(kBadInput)), never undefined.
npy::Array Cast(const npy::Array& x, ir::DType to);

// ------------------------------------------------------------ selection
// TOPK_V2: the k largest values of each last-axis row, descending; equal
// values keep the lower index first. float32 or int32 input; indices int32.
struct TopKResult {
  npy::Array values;
  npy::Array indices;
};
TopKResult TopK(const npy::Array& x, int64_t k);

// GATHER: params' slices along `axis` picked by int32/int64 `indices`
// (output shape params[:axis] + indices[batch_dims:] + params[axis+1:]),
// with `batch_dims` leading dimensions shared by both. Negative axis counts
// from the end. Any dtype.
npy::Array Gather(const npy::Array& params, const npy::Array& indices, int axis, int batch_dims = 0);

// GATHER_ND: the last axis of `indices` (depth D) addresses the first D
// axes of params; output indices.shape[:-1] + params.shape[D:]. ONNX
// GatherElements converts to this op.
npy::Array GatherNd(const npy::Array& params, const npy::Array& indices);

// ONNX GatherElements (numpy take_along_axis): out[i..., j, k...] =
// x[i..., indices[i..., j, k...], k...] along `axis`; indices have x's rank
// and, on every other axis, a size no larger than x's. Negative indices
// count from the end, as ONNX allows.
npy::Array GatherElements(const npy::Array& x, const npy::Array& indices, int axis);

// ------------------------------------------------------------ shape
// CONCATENATION along `axis` (negative counts from the end); same dtype and
// equal other dimensions.
npy::Array Concat(const std::vector<npy::Array>& parts, int axis);
// RESHAPE: at most one -1, element count preserved.
npy::Array Reshape(const npy::Array& x, const std::vector<int64_t>& shape);
// TILE: x repeated multiples[i] times along axis i (one multiple per axis,
// each >= 0). Any dtype.
npy::Array Tile(const npy::Array& x, const std::vector<int64_t>& multiples);

// ------------------------------------------------------------ boxes
// Boxes are float32 with a last axis of 4.
enum class BoxLayout { kXyxy, kCxcywh };
BoxLayout ParseBoxLayout(const std::string& name);  // "xyxy" | "cxcywh"; Error(kBadInput)
npy::Array ConvertBoxes(const npy::Array& boxes, BoxLayout from, BoxLayout to);

// Delta decoding against anchors (Faster R-CNN / torchvision BoxCoder):
// anchors in cxcywh, deltas (dx, dy, dw, dh) divided by `weights`;
// cx = ax + dx*aw, cy = ay + dy*ah, w = aw*exp(min(dw, max_log_scale)),
// h likewise. Output cxcywh. Anchors broadcast against deltas.
npy::Array DecodeBoxDeltas(const npy::Array& deltas, const npy::Array& anchors,
                           std::array<float, 4> weights = {1, 1, 1, 1},
                           float max_log_scale = 4.135166556742356f /* log(1000/16) */);

// DETR-style reparametrisation against reference points (RF-DETR's
// refpoint_embed, both cxcywh): cxcy = d.xy * ref.wh + ref.xy,
// wh = exp(d.wh) * ref.wh. Reference broadcasts against deltas.
npy::Array ReparamBoxes(const npy::Array& deltas, const npy::Array& reference);

// Greedy non-maximum suppression over boxes [N,4] and scores [N]: visit
// boxes by descending score (ties: lower index first), drop those under
// score_threshold, keep a box unless it overlaps an already kept box of the
// same class (classes [N] int32; empty: one class) by IoU > iou_threshold;
// stop at max_detections. Returns the kept indices (int32 [K]) in visiting
// order. The semantics of NON_MAX_SUPPRESSION_V5 without soft-NMS, per class
// as torchvision's batched_nms.
struct NmsOptions {
  float iou_threshold = 0.5f;
  float score_threshold = -std::numeric_limits<float>::infinity();
  int64_t max_detections = 100;
  BoxLayout layout = BoxLayout::kXyxy;
};
npy::Array NonMaxSuppression(const npy::Array& boxes, const npy::Array& scores, const npy::Array& classes,
                             const NmsOptions& options);

// ------------------------------------------------------------ masks
// RESIZE_BILINEAR over the last two axes ([..., H, W] -> [..., out_h,
// out_w]), float32, with LiteRT's align_corners / half_pixel_centers rule.
npy::Array ResizeBilinear(const npy::Array& masks, int64_t out_h, int64_t out_w, bool align_corners = false,
                          bool half_pixel_centers = false);

// ------------------------------------------------------------ by name
// The steps a pipeline spec names ("op" of a host stage), with their
// parameters as JSON (docs/pipeline.md lists each).
struct HostStepInfo {
  std::string name;
  std::string inputs;    // e.g. "x, indices"
  std::string outputs;   // e.g. "values, indices"
  std::string params;    // e.g. "k (int)"
  std::string replaces;  // the graph op(s) with the same semantics
};
const std::vector<HostStepInfo>& HostSteps();
// Runs step `name` (Error(kBadInput) for an unknown name, a missing or
// mistyped parameter, a wrong input count).
std::vector<npy::Array> RunHostStep(const std::string& name, const nlohmann::json& params,
                                    const std::vector<npy::Array>& inputs);
// The number of outputs step `name` produces with `params` (specs are
// checked before anything runs).
int HostStepOutputCount(const std::string& name, const nlohmann::json& params);

}  // namespace gpuclean::pipeline
