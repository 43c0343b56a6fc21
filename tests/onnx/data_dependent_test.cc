// ctest-labels: litert
// Values whose length depends on the data (src/onnx/ops/data_dependent.cc):
// a detector's postprocessing as torchvision exports it - per class a
// NonZero of the scores above a threshold, GatherND, TopK of min(k, n), the
// classes concatenated, an If on "no candidates", NonMaxSuppression over
// class-offset boxes, the first few kept - converted to a static graph of
// padded tensors and counts, and proven against onnxruntime on inputs that
// leave classes with no candidate, fewer than k, and none at all.
#include <gtest/gtest.h>

#include "detector_model.h"
#include "gpuclean/convert.h"
#include "gpuclean/valid_rows.h"
#include "support/test_support.h"

namespace gpuclean::testing {
namespace {

OnnxTestModel Postprocessing() {
  OnnxTestModel m;
  m.Input("scores", {kAnchors, kClasses});
  m.Input("boxes", {kAnchors, 4});
  AddDetectorPostprocessing(m);
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
