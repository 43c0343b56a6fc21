// ctest-labels: litert
// Values whose length depends on the data (src/onnx/ops/data_dependent.cc):
// a detector's postprocessing as torchvision exports it - per class a
// NonZero of the scores above a threshold, GatherND, TopK of min(k, n), the
// classes concatenated, an If on "no candidates", NonMaxSuppression over
// class-offset boxes, the first few kept - converted to a static graph of
// padded tensors and counts, and proven against onnxruntime on inputs that
// leave classes with no candidate, fewer than k, and none at all.
#include <gtest/gtest.h>

#include "gpuclean/convert.h"
#include "gpuclean/valid_rows.h"
#include "onnx_test_model.h"
#include "support/test_support.h"

namespace gpuclean::testing {
namespace {

constexpr int64_t kAnchors = 24, kClasses = 3, kPerClass = 5, kKept = 6;

OnnxTestModel Postprocessing() {
  OnnxTestModel m;
  m.Input("scores", {kAnchors, kClasses});
  m.Input("boxes", {kAnchors, 4});
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
  return m;
}

npy::Array Scores(const std::function<float(int64_t anchor, int64_t c)>& score) {
  npy::Array a;
  a.shape = {kAnchors, kClasses};
  a.data.resize(kAnchors * kClasses * 4);
  for (int64_t i = 0; i < kAnchors; ++i)
    for (int64_t c = 0; c < kClasses; ++c) a.as<float>()[i * kClasses + c] = score(i, c);
  return a;
}

convert::Result ConvertOn(const std::map<std::string, npy::Array>& inputs, TempDir& dir) {
  convert::Options o;
  o.onnx_path = Postprocessing().Write(dir.file("postprocess.onnx"));
  o.target = "none";
  o.proof_inputs = inputs;
  return convert::Convert(o);
}

void ExpectProven(const convert::Result& r) {
  EXPECT_TRUE(r.report.proven);
  for (const auto& p : r.report.proof) EXPECT_TRUE(p.ok) << p.name << " set " << p.seed << ": " << p.why;
  EXPECT_EQ(r.exit_code(), 0);
}

TEST(DataDependentLengths, DetectorPostprocessingProvesOnSeededInputs) {
  TempDir dir;
  const convert::Result r = ConvertWithoutTarget(Postprocessing(), "postprocess.onnx", dir);
  ExpectProven(r);
  std::map<tfl::BuiltinOperator, int> ops;
  for (const ir::Op& op : r.model.main().ops) ++ops[op.code];
  EXPECT_EQ(ops[tfl::BuiltinOperator_NON_MAX_SUPPRESSION_V4], 1);
  EXPECT_GE(ops[tfl::BuiltinOperator_TOPK_V2], kClasses);  // the per-class selections
  // Three padded outputs, each with its count after the ONNX outputs.
  const std::vector<PaddedOutput> padded = ReadPaddedOutputs(r.model);
  ASSERT_EQ(padded.size(), 3u);
  EXPECT_EQ(padded[0].output, "det_boxes");
  EXPECT_EQ(padded[0].count, "det_boxes_count");
  EXPECT_EQ(padded[0].axis, 0);
  const ir::Subgraph& g = r.model.main();
  ASSERT_EQ(g.outputs.size(), 6u);
  EXPECT_EQ(g.tensors[g.outputs[0]].shape, (std::vector<int32_t>{kKept, 4}));
  EXPECT_EQ(g.tensors[g.outputs[3]].dtype, tfl::TensorType_INT32);
}

TEST(DataDependentLengths, AClassWithNoCandidateAndOneWithFewerThanK) {
  TempDir dir;
  // Class 0: every anchor; class 1: two anchors; class 2: none.
  const npy::Array scores = Scores([](int64_t i, int64_t c) {
    if (c == 0) return 0.3f + 0.02f * static_cast<float>(i);
    if (c == 1) return i == 3 || i == 17 ? 0.9f - 0.1f * static_cast<float>(i == 17) : 0.1f;
    return 0.05f;
  });
  ExpectProven(ConvertOn({{"scores", scores}}, dir));
}

TEST(DataDependentLengths, NoCandidateAtAllTakesTheEmptyBranch) {
  TempDir dir;
  const npy::Array scores = Scores([](int64_t, int64_t) { return 0.1f; });
  const convert::Result r = ConvertOn({{"scores", scores}}, dir);
  ExpectProven(r);
}

}  // namespace
}  // namespace gpuclean::testing
