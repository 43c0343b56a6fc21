#pragma once
// A detector whose postprocessing sits inside the ONNX graph, written the
// way torchvision's SSD/RetinaNet export it (data_dependent_test.cc,
// convert_host_ops_test.cc).
#include <string>
#include <vector>

#include "onnx_test_model.h"

namespace gpuclean::testing {

constexpr int64_t kAnchors = 24, kClasses = 3, kPerClass = 5, kKept = 6;

// A detector's postprocessing as torchvision exports it, reading `scores`
// [kAnchors, kClasses] and `boxes` [kAnchors, 4] (xyxy): per class a NonZero
// of the scores above 0.2, GatherND, TopK of min(kPerClass, n), the labels
// by ConstantOfShape; the classes concatenated; an If on "no candidates";
// NonMaxSuppression over class-offset boxes; the first kKept. Outputs
// det_boxes, det_scores, det_labels.
inline void AddDetectorPostprocessing(OnnxTestModel& m) {
  m.InitF32("threshold", {}, {0.2f});
  m.InitI64("per_class", {1}, {kPerClass});
  m.InitI64("one_shape", {1}, {1});
  std::vector<std::string> values, boxes, labels;
  for (int64_t c = 0; c < kClasses; ++c) {
    const std::string s = "c" + std::to_string(c) + "/";
    m.InitI64(s + "index", {}, {c});
    m.Node("Gather", {"scores", s + "index"}, {s + "column"}).Int("axis", 1);
    m.Node("Greater", {s + "column", "threshold"}, {s + "keep"});
    m.Node("NonZero", {s + "keep"}, {s + "hits"});
    m.Node("Transpose", {s + "hits"}, {s + "hit_rows"}).Ints("perm", {1, 0});
    m.Node("GatherND", {s + "column", s + "hit_rows"}, {s + "hit_scores"});
    m.Node("GatherND", {"boxes", s + "hit_rows"}, {s + "hit_boxes"});
    m.Node("Shape", {s + "hit_scores"}, {s + "n"});
    m.Node("Concat", {"per_class", s + "n"}, {s + "k_or_n"}).Int("axis", 0);
    m.Node("ReduceMin", {s + "k_or_n"}, {s + "k_scalar"}).Int("keepdims", 0);
    m.Node("Reshape", {s + "k_scalar", "one_shape"}, {s + "k"});
    m.Node("TopK", {s + "hit_scores", s + "k"}, {s + "top_scores", s + "top_index"});
    m.Node("Gather", {s + "hit_boxes", s + "top_index"}, {s + "top_boxes"}).Int("axis", 0);
    m.Node("Shape", {s + "top_scores"}, {s + "top_shape"});
    m.Node("ConstantOfShape", {s + "top_shape"}, {s + "labels"}).TensorI64("value", {1}, {c});
    values.push_back(s + "top_scores");
    boxes.push_back(s + "top_boxes");
    labels.push_back(s + "labels");
  }
  m.Node("Concat", values, {"all_scores"}).Int("axis", 0);
  m.Node("Concat", boxes, {"all_boxes"}).Int("axis", 0);
  m.Node("Concat", labels, {"all_labels"}).Int("axis", 0);

  // torchvision's batched_nms: skip when empty, else offset boxes per class.
  m.Node("Shape", {"all_boxes"}, {"all_shape"});
  m.Node("ReduceProd", {"all_shape"}, {"numel"}).Int("keepdims", 0);
  m.InitI64("zero", {}, {0});
  m.Node("Equal", {"numel", "zero"}, {"empty"});

  OnnxTestModel then_branch;
  then_branch.Node("Constant", {}, {"no_rows"}).TensorI64("value", {0}, {});
  then_branch.Output("no_rows", kOnnxInt64);

  OnnxTestModel else_branch;
  else_branch.Node("ReduceMax", {"all_boxes"}, {"max_coordinate"}).Int("keepdims", 0);
  else_branch.Node("Constant", {}, {"one"}).TensorF32("value", {}, {1.0f});
  else_branch.Node("Add", {"max_coordinate", "one"}, {"spacing"});
  else_branch.Node("Cast", {"all_labels"}, {"label_values"}).Int("to", kOnnxFloat);
  else_branch.Node("Mul", {"label_values", "spacing"}, {"offsets"});
  else_branch.Node("Constant", {}, {"axis1"}).TensorI64("value", {1}, {1});
  else_branch.Node("Unsqueeze", {"offsets", "axis1"}, {"offset_column"});
  else_branch.Node("Add", {"all_boxes", "offset_column"}, {"apart"});
  else_branch.Node("Constant", {}, {"axis0"}).TensorI64("value", {1}, {0});
  else_branch.Node("Unsqueeze", {"apart", "axis0"}, {"nms_boxes"});
  else_branch.Node("Unsqueeze", {"all_scores", "axis0"}, {"scores1"});
  else_branch.Node("Unsqueeze", {"scores1", "axis0"}, {"nms_scores"});
  else_branch.Node("Constant", {}, {"max_out"}).TensorI64("value", {1}, {1000});
  else_branch.Node("Constant", {}, {"iou"}).TensorF32("value", {1}, {0.3f});
  else_branch.Node("NonMaxSuppression", {"nms_boxes", "nms_scores", "max_out", "iou"}, {"selected"});
  else_branch.Node("Constant", {}, {"column2"}).TensorI64("value", {1}, {2});
  else_branch.Node("Gather", {"selected", "column2"}, {"selected_index"}).Int("axis", 1);
  else_branch.Node("Squeeze", {"selected_index", "axis1"}, {"keep"});
  else_branch.Output("keep", kOnnxInt64);

  m.Node("If", {"empty"}, {"kept"}).Graph("then_branch", then_branch).Graph("else_branch", else_branch);
  m.InitI64("start", {1}, {0});
  m.InitI64("end", {1}, {kKept});
  m.Node("Slice", {"kept", "start", "end"}, {"first"});
  m.Node("Gather", {"all_boxes", "first"}, {"det_boxes"}).Int("axis", 0);
  m.Node("Gather", {"all_scores", "first"}, {"det_scores"}).Int("axis", 0);
  m.Node("Gather", {"all_labels", "first"}, {"det_labels"}).Int("axis", 0);
  m.Output("det_boxes");
  m.Output("det_scores");
  m.Output("det_labels", kOnnxInt64);
}

// A small convolutional detector feeding it: image [1, 3, 16, 16] -> a
// convolution to kClasses + 4 channels at 4 x 6 positions (the anchors) ->
// softmax scores and positive xyxy boxes.
inline OnnxTestModel DetectorWithNms() {
  OnnxTestModel m;
  m.Input("image", {1, 3, 16, 16});
  const int64_t channels = kClasses + 4;
  m.InitF32("w", {channels, 3, 3, 3}, RandomValues(static_cast<size_t>(channels * 27), 11, 0.6f));
  m.InitF32("b", {channels}, RandomValues(static_cast<size_t>(channels), 12, 0.2f));
  m.Node("Conv", {"image", "w", "b"}, {"features"}).Ints("strides", {4, 3}).Ints("pads", {1, 1, 1, 1});
  m.InitI64("rows_shape", {2}, {channels, kAnchors});
  m.Node("Reshape", {"features", "rows_shape"}, {"per_channel"});
  m.Node("Transpose", {"per_channel"}, {"per_anchor"}).Ints("perm", {1, 0});
  m.InitI64("split", {2}, {kClasses, 4});
  m.Node("Split", {"per_anchor", "split"}, {"logits", "raw_boxes"}).Int("axis", 1);
  m.Node("Softmax", {"logits"}, {"scores"}).Int("axis", 1);
  m.Node("Sigmoid", {"raw_boxes"}, {"unit_boxes"});
  m.InitF32("extent", {}, {12.0f});
  m.Node("Mul", {"unit_boxes", "extent"}, {"sized"});
  m.InitI64("zero2", {1}, {0});
  m.InitI64("two", {1}, {2});
  m.InitI64("four", {1}, {4});
  m.InitI64("along_coordinates", {1}, {1});
  m.Node("Slice", {"sized", "zero2", "two", "along_coordinates"}, {"corner"});
  m.Node("Slice", {"sized", "two", "four", "along_coordinates"}, {"extent2"});
  m.Node("Add", {"corner", "extent2"}, {"far_corner"});
  m.Node("Concat", {"corner", "far_corner"}, {"boxes"}).Int("axis", 1);
  AddDetectorPostprocessing(m);
  return m;
}

}  // namespace gpuclean::testing
