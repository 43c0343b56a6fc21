// ctest-labels: litert
// Slice against onnxruntime, on the forms real exports write: a whole-axis
// reversal (steps -1 to -INT64_MAX, silero VAD's reflect padding) keeps the
// shape and must still reverse; partial and strided reversals.
#include <gtest/gtest.h>

#include <climits>

#include "gpuclean/convert.h"
#include "onnx/onnx_test_model.h"
#include "support/test_support.h"

namespace gpuclean {
namespace {

using testing::OnnxTestModel;

struct SliceCase {
  std::string name;
  std::vector<int64_t> starts, ends, axes, steps;
};

class SliceForm : public ::testing::TestWithParam<SliceCase> {};

TEST_P(SliceForm, MatchesOnnxruntime) {
  const SliceCase& c = GetParam();
  OnnxTestModel m;
  m.Input("x", {1, 3, 7});
  m.InitI64("starts", {static_cast<int64_t>(c.starts.size())}, c.starts);
  m.InitI64("ends", {static_cast<int64_t>(c.ends.size())}, c.ends);
  m.InitI64("axes", {static_cast<int64_t>(c.axes.size())}, c.axes);
  m.InitI64("steps", {static_cast<int64_t>(c.steps.size())}, c.steps);
  m.Node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"y"});
  m.Output("y");
  testing::TempDir dir;
  convert::Options o;
  o.onnx_path = m.Write(dir.file(c.name + ".onnx"));
  o.target = "none";
  const convert::Result r = convert::Convert(o);
  EXPECT_TRUE(r.report.proven) << r.report.RenderText();
}

INSTANTIATE_TEST_SUITE_P(Slices, SliceForm,
                         ::testing::Values(SliceCase{"whole_axis_reversed", {-1}, {-INT64_MAX}, {-1}, {-1}},
                                           SliceCase{
                                               "two_axes_reversed", {-1, -1}, {INT64_MIN, INT64_MIN}, {1, 2}, {-1, -1}},
                                           SliceCase{"tail_reversed", {-2}, {2}, {2}, {-1}},
                                           SliceCase{"reversed_by_two", {6}, {-INT64_MAX}, {2}, {-2}},
                                           SliceCase{"forward_whole", {0}, {INT64_MAX}, {2}, {1}}),
                         [](const ::testing::TestParamInfo<SliceCase>& info) { return info.param.name; });

}  // namespace
}  // namespace gpuclean
