// Rule-edge probes for the rules read from ML Drift's v2.2.0 source
// (data/compat/mldrift-cl@2.2.0.json): for each rule, one micro-graph just
// inside its edge (lint: delegated) and one a step past it (lint: rejected by
// an entry whose provenance is the source). A rule the matrix lost, or one
// that fires too widely, fails here.
#include <gtest/gtest.h>

#include <cctype>
#include <functional>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "gpuclean/builder.h"
#include "gpuclean/lint.h"
#include "gpuclean/synth.h"
#include "lint_test_util.h"
#include "support/tflite_names.h"

namespace gpuclean::lint {
namespace {

using builder::GraphBuilder;
using builder::Options;
using ::gpuclean::testing::tflite_names::F32;
using ::gpuclean::testing::tflite_names::I32;

constexpr const char* kTarget = "mldrift-cl@2.2.0";

// A graph whose last op is the probed node; `past_edge` picks the side.
struct RuleEdge {
  std::string rule;  // in words, for the failure message
  std::function<ir::Model(bool past_edge)> make;
};

ir::Model WithLastOpVersion(ir::Model model, int version) {
  model.main().ops.back().version = version;
  return model;
}

// The builder needs constant perms, axes and sizes to infer shapes; lint
// must see them at run time. Turns input `position` of the last op into a
// graph input after the shapes are known.
ir::Model WithRuntimeInputAt(ir::Model model, int position) {
  ir::Subgraph& g = model.main();
  const int tensor = g.ops.back().inputs.at(position);
  g.tensors[tensor].data.reset();
  g.inputs.push_back(tensor);
  return model;
}

ir::Model Unary(tfl::BuiltinOperator code, const builder::Shape& shape) {
  GraphBuilder b;
  const int x = b.Input("x", F32, shape);
  b.Output(b.Op(code, {x})[0]);
  return b.Finish();
}

ir::Model Binary(tfl::BuiltinOperator code) {
  GraphBuilder b;
  const int x = b.Input("x", F32, {1, 4, 4, 8});
  const int y = b.Input("y", F32, {1, 4, 4, 8});
  b.Output(b.Op(code, {x, y})[0]);
  return b.Finish();
}

ir::Model Conv(int version) {
  GraphBuilder b;
  const int x = b.Input("x", F32, {1, 8, 8, 4});
  const int w = b.ConstF32("w", {8, 3, 3, 4}, std::vector<float>(8 * 3 * 3 * 4, 0.1f));
  b.Output(b.Conv2D(x, w, builder::kNoInput, tfl::Padding_SAME, 1, 1));
  return WithLastOpVersion(b.Finish(), version);
}

const std::vector<RuleEdge>& Edges() {
  static const std::vector<RuleEdge> edges = {
      {"CONV_2D op version at most 6", [](bool past) { return Conv(past ? 7 : 6); }},
      {"SUB op version at most 2",
       [](bool past) { return WithLastOpVersion(Binary(tfl::BuiltinOperator_SUB), past ? 3 : 2); }},
      {"RESIZE_NEAREST_NEIGHBOR op version at most 3",
       [](bool past) {
         GraphBuilder b;
         b.Output(b.ResizeNearestNeighbor(b.Input("x", F32, {1, 4, 4, 8}), 8, 8));
         return WithLastOpVersion(b.Finish(), past ? 4 : 3);
       }},
      {"SOFTMAX beta exactly 1",
       [](bool past) {
         GraphBuilder b;
         b.Output(b.Softmax(b.Input("x", F32, {1, 16}), past ? 0.5f : 1.0f));
         return b.Finish();
       }},
      {"TRANSPOSE perm constant",
       [](bool past) {
         GraphBuilder b;
         const int x = b.Input("x", F32, {1, 4, 6, 8});
         const int perm = b.ConstI32("perm", {4}, {0, 2, 1, 3});
         tfl::TransposeOptionsT options;
         b.Output(b.Op(tfl::BuiltinOperator_TRANSPOSE, {x, perm}, Options(options))[0]);
         return past ? WithRuntimeInputAt(b.Finish(), 1) : b.Finish();
       }},
      {"RESHAPE new shape constant",
       [](bool past) {
         GraphBuilder b;
         const int x = b.Input("x", F32, {1, 4, 6, 8});
         const int shape = past ? b.Input("shape", I32, {2}) : b.ConstI32("shape", {2}, {24, 8});
         tfl::ReshapeOptionsT options;
         options.new_shape = {24, 8};
         b.Output(b.Op(tfl::BuiltinOperator_RESHAPE, {x, shape}, Options(options))[0]);
         return b.Finish();
       }},
      {"MEAN axes constant",
       [](bool past) {
         GraphBuilder b;
         const int x = b.Input("x", F32, {1, 4, 6, 8});
         b.Output(b.Mean(x, {1, 2}, true));
         return past ? WithRuntimeInputAt(b.Finish(), 1) : b.Finish();
       }},
      {"PAD input of rank 3 or 4",
       [](bool past) {
         GraphBuilder b;
         if (past)
           b.Output(b.Pad(b.Input("x", F32, {6, 8}), {{1, 1}, {0, 0}}));
         else
           b.Output(b.Pad(b.Input("x", F32, {1, 6, 8}), {{0, 0}, {1, 1}, {0, 0}}));
         return b.Finish();
       }},
      {"MIRROR_PAD mode REFLECT",
       [](bool past) {
         GraphBuilder b;
         b.Output(b.MirrorPad(b.Input("x", F32, {1, 6, 6, 8}), {{0, 0}, {1, 1}, {1, 1}, {0, 0}},
                              past ? tfl::MirrorPadMode_SYMMETRIC : tfl::MirrorPadMode_REFLECT));
         return b.Finish();
       }},
      {"STRIDED_SLICE without shrink_axis_mask",
       [](bool past) {
         GraphBuilder b;
         builder::StridedSliceMasks masks;
         masks.shrink_axis = past ? 1 : 0;
         b.Output(b.StridedSlice(b.Input("x", F32, {1, 6, 8}), {0, 0, 0}, {1, 6, 8}, {1, 1, 1}, masks));
         return b.Finish();
       }},
      {"GATHER indices 1-D",
       [](bool past) {
         GraphBuilder b;
         const int x = b.Input("x", F32, {1, 6, 8});
         const int indices = past ? b.ConstI32("i", {2, 2}, {0, 1, 2, 3}) : b.ConstI32("i", {4}, {0, 1, 2, 3});
         b.Output(b.Gather(x, indices, 1));
         return b.Finish();
       }},
      {"DEPTH_TO_SPACE block size above 1",
       [](bool past) {
         GraphBuilder b;
         b.Output(b.DepthToSpace(b.Input("x", F32, {1, 4, 4, 16}), past ? 1 : 2));
         return b.Finish();
       }},
      {"BATCH_MATMUL constant operand on the right",
       [](bool past) {
         GraphBuilder b;
         const int x = b.Input("x", F32, {1, 8, 8});
         const int w = b.ConstF32("w", {1, 8, 8}, std::vector<float>(64, 0.5f));
         b.Output(past ? b.BatchMatMul(w, x) : b.BatchMatMul(x, w));
         return b.Finish();
       }},
      {"DYNAMIC_UPDATE_SLICE start indices at run time",
       [](bool past) {
         GraphBuilder b;
         const int x = b.Input("x", F32, {1, 8, 8, 4});
         const int update = b.Input("u", F32, {1, 2, 2, 4});
         const int start = past ? b.ConstI32("s", {4}, {0, 1, 1, 0}) : b.Input("s", I32, {4});
         b.Output(b.Op(tfl::BuiltinOperator_DYNAMIC_UPDATE_SLICE, {x, update, start})[0]);
         return b.Finish();
       }},
      {"RESIZE_BILINEAR not align_corners and half_pixel_centers together",
       [](bool past) {
         GraphBuilder b;
         b.Output(b.ResizeBilinear(b.Input("x", F32, {1, 4, 4, 8}), 8, 8, false, true));
         ir::Model model = b.Finish();
         // TFLite's own kernel refuses the pair too, so the builder does: set it after.
         model.main().ops.back().options.AsResizeBilinearOptions()->align_corners = past;
         return model;
       }},
      {"tensors of rank at most 4",
       [](bool past) {
         return past ? Unary(tfl::BuiltinOperator_RELU, {1, 2, 3, 4, 5})
                     : Unary(tfl::BuiltinOperator_RELU, {2, 3, 4, 5});
       }},
      {"no runtime int64 tensor",
       [](bool past) {
         GraphBuilder b;
         const int x = b.Input("x", past ? tfl::TensorType_INT64 : I32, {1, 8});
         b.Output(b.Cast(x, F32));
         return b.Finish();
       }},
  };
  return edges;
}

class RuleEdges : public ::testing::TestWithParam<size_t> {};

TEST_P(RuleEdges, InsideIsDelegatedAndOneStepPastIsRejectedFromTheSource) {
  const RuleEdge& edge = Edges()[GetParam()];
  for (const bool past : {false, true}) {
    const ir::Model model = edge.make(past);
    const Report report = testing::LintOn(model, kTarget);
    const int node = static_cast<int>(model.main().ops.size()) - 1;
    const Status status = report.node_status[0][node];
    std::string findings;
    for (const Finding& f : report.findings)
      if (f.node == node) findings += "\n  " + f.rule + " (" + f.provenance + "): " + f.why;
    if (!past) {
      EXPECT_EQ(status, Status::kDelegated) << edge.rule << ", inside the edge:" << findings;
      continue;
    }
    EXPECT_EQ(status, Status::kRejected) << edge.rule << ", one step past the edge:" << findings;
    bool from_source = false;
    for (const Finding& f : report.findings)
      from_source |= f.node == node && f.status == Status::kRejected && f.provenance == "source";
    EXPECT_TRUE(from_source) << edge.rule << ": no rejecting finding read from the source:" << findings;
  }
}

INSTANTIATE_TEST_SUITE_P(MlDriftCl220, RuleEdges, ::testing::Range<size_t>(0, Edges().size()),
                         [](const ::testing::TestParamInfo<size_t>& info) {
                           std::string name;
                           for (char c : Edges()[info.param].rule)
                             if (std::isalnum(static_cast<unsigned char>(c))) name += c;
                           return name;
                         });

// Every op rule synth can build, from the matrix itself: the plain graph is
// delegated, the graph one step past the rule is refused by that very entry.
// How many probes were built and how many rules skipped.
std::pair<size_t, size_t> ExpectEveryBuildableRuleRefusesOneStepPastItsEdge(const std::string& target) {
  const Matrix& matrix = testing::Target(target);
  const synth::RuleEdgeSet set = synth::RuleEdgeProbes(matrix);
  for (const synth::RuleEdgeProbe& probe : set.probes) {
    const int node = static_cast<int>(probe.inside.main().ops.size()) - 1;
    const auto findings_of = [&](const Report& report) {
      std::string text;
      for (const Finding& f : report.findings)
        if (f.node == node) text += "\n  " + f.rule + ": " + f.why;
      return text;
    };
    const Report inside = testing::LintOn(probe.inside, target);
    EXPECT_EQ(inside.node_status[0][node], Status::kDelegated)
        << probe.entry << ", plain graph:" << findings_of(inside);
    const Report past = testing::LintOn(probe.past, target);
    EXPECT_EQ(past.node_status[0][node], Status::kRejected) << probe.entry << ", one step past:" << findings_of(past);
    const bool by_entry = std::any_of(past.findings.begin(), past.findings.end(),
                                      [&](const Finding& f) { return f.node == node && f.rule == probe.entry; });
    EXPECT_TRUE(by_entry) << probe.entry << " did not decide its own probe:" << findings_of(past);
  }
  std::string skipped;
  for (const std::string& s : set.skipped) skipped += "\n  " + s;
  std::cout << target << ": " << set.probes.size() << " rule-edge probes built, " << set.skipped.size()
            << " skipped:" << skipped << "\n";
  return {set.probes.size(), set.skipped.size()};
}

TEST(MlDriftCl220, EveryBuildableRuleRefusesOneStepPastItsEdge) {
  // Most rules are buildable; what is not is printed with the reason.
  const auto [built, skipped] = ExpectEveryBuildableRuleRefusesOneStepPastItsEdge(kTarget);
  EXPECT_GE(built, 150u);
  EXPECT_GE(built, 3 * skipped);
}

// The IR path's rules (read at commit f674577): dispatch, version caps and
// each support_<op>.cc check the format expresses (dtypes, constant inputs,
// options, weight quantisation).
TEST(MlDriftIr, EveryBuildableRuleRefusesOneStepPastItsEdge) {
  // Its rank limits need rank-5 graphs of ops synth builds at rank 4 only,
  // and dtype_any rules a graph synth cannot make (edges.json says why).
  EXPECT_GE(ExpectEveryBuildableRuleRefusesOneStepPastItsEdge("mldrift-ir@f674577").first, 240u);
}

// Where the two paths differ: the legacy builder refuses any rank-5 tensor,
// the IR path's RESHAPE takes one (its IR shape is 5-D).
TEST(MlDriftIr, TakesTheRank5ReshapeTheLegacyBuilderRefuses) {
  const ir::Model model = synth::Build("rank5-reshape");
  const int node = static_cast<int>(model.main().ops.size()) - 1;
  ASSERT_EQ(model.main().ops[node].code, tfl::BuiltinOperator_RESHAPE);
  EXPECT_EQ(testing::LintOn(model, kTarget).node_status[0][node], Status::kRejected);
  EXPECT_EQ(testing::LintOn(model, "mldrift-ir@f674577").node_status[0][node], Status::kDelegated);
}

TEST(MlDriftCl220, EveryEntryReadFromTheSourceCitesFileLineAndTag) {
  const Matrix& matrix = testing::Target(kTarget);
  int from_source = 0;
  for (const Entry& e : matrix.entries) {
    EXPECT_FALSE(e.provenance.empty()) << e.id;
    if (e.provenance != "source") continue;
    ++from_source;
    EXPECT_NE(e.evidence.source.find(" @ v2.2.0"), std::string::npos) << e.id << ": " << e.evidence.source;
    // The delegate's own files, or TFLite's GPU compatibility check its parsers call.
    const bool delegate_file =
        e.evidence.source.rfind("ml_drift_delegate/", 0) == 0 || e.evidence.source.rfind("tflite/", 0) == 0;
    EXPECT_TRUE(delegate_file) << e.id << ": " << e.evidence.source;
  }
  EXPECT_GT(from_source, 100);
}

}  // namespace
}  // namespace gpuclean::lint
