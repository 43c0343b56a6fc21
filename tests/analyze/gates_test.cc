// Every gate against hand-computed answers.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "gpuclean/error.h"
#include "gpuclean/gates.h"
#include "support/arrays.h"

namespace gpuclean::analyze {
namespace {

using gpuclean::testing::F32;
using gpuclean::testing::I32;

ErrorKind KindOfGates(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.kind();
  }
  return ErrorKind::kInternal;  // "did not throw"
}

TEST(Gates, ParseForms) {
  GateSpec g = ParseGate("corr>=0.999");
  EXPECT_EQ(g.kind, GateKind::kCorrelation);
  EXPECT_DOUBLE_EQ(g.threshold, 0.999);
  EXPECT_EQ(g.tensor, "");
  EXPECT_EQ(g.text, "corr>=0.999");
  g = ParseGate("maxabs<=1e-3");
  EXPECT_EQ(g.kind, GateKind::kMaxAbs);
  EXPECT_DOUBLE_EQ(g.threshold, 1e-3);
  g = ParseGate("out0:argmax");
  EXPECT_EQ(g.kind, GateKind::kArgmax);
  EXPECT_EQ(g.tensor, "out0");
  EXPECT_EQ(g.text, "argmax");
  g = ParseGate("logits.npy:topk=5");
  EXPECT_EQ(g.kind, GateKind::kTopK);
  EXPECT_EQ(g.k, 5);
  EXPECT_EQ(g.tensor, "logits");
  EXPECT_EQ(ParseGate("iou>=0.99").kind, GateKind::kIou);
  EXPECT_EQ(ParseGate("equal").kind, GateKind::kEqual);
  for (const char* bad :
       {"corr>0.9", "corr>=", "corr>=x", "topk=0", "topk=1.5", "maxabs<=-1", ":argmax", "argmax2", "iou>=nan", ""})
    EXPECT_EQ(KindOfGates([&] { ParseGate(bad); }), ErrorKind::kUsage) << bad;
  EXPECT_EQ(ParseBoxFormat("cxcywh"), BoxFormat::kCxcywh);
  EXPECT_EQ(KindOfGates([] { ParseBoxFormat("xywh"); }), ErrorKind::kUsage);
}

TEST(Gates, CorrelationAndMaxAbs) {
  // corr([1,2,3,4],[1,2,3,5]) = 6.5 / sqrt(5 * 8.75) = 0.982708...; max abs diff 1.
  const Metrics m = Compare(F32({4}, {1, 2, 3, 4}), F32({4}, {1, 2, 3, 5}));
  EXPECT_TRUE(CorrelationGate(m, 0.98).passed);
  const GateResult fail = CorrelationGate(m, 0.99);
  EXPECT_FALSE(fail.passed);
  EXPECT_NEAR(fail.value, 0.98270762, 1e-8);
  EXPECT_TRUE(MaxAbsGate(m, 1.0).passed);  // the bound is inclusive
  EXPECT_FALSE(MaxAbsGate(m, 0.5).passed);
  EXPECT_DOUBLE_EQ(MaxAbsGate(m, 0.5).value, 1.0);
}

TEST(Gates, NonFiniteOutputsFailNumericGates) {
  // max_abs_diff and correlation skip the NaN; the gates must not.
  const Metrics m = Compare(F32({4}, {1, 2, 3, 4}), F32({4}, {1, 2, NAN, 4}));
  EXPECT_DOUBLE_EQ(m.max_abs_diff, 0.0);
  EXPECT_FALSE(MaxAbsGate(m, 1.0).passed);
  EXPECT_FALSE(CorrelationGate(m, 0.5).passed);
  EXPECT_NE(MaxAbsGate(m, 1.0).detail.find("non-finite: 0 in REF, 1 in GOT"), std::string::npos);
  // A constant side makes the correlation NaN: it fails, never passes by default.
  const Metrics flat = Compare(F32({3}, {2, 2, 2}), F32({3}, {1, 2, 3}));
  EXPECT_FALSE(CorrelationGate(flat, -1).passed);
}

TEST(Gates, ArgmaxPerRowOfTheLastAxis) {
  // Rows: [.1 .9 0] -> 1 vs [.2 .7 .1] -> 1 (equal); [.5 .2 .3] -> 0 vs [.1 .2 .3] -> 2;
  // tie [1 1 0] -> 0 (first index) vs [.9 1 0] -> 1: the reference scores
  // both choices alike, so the swap is a near-tie, not a mismatch.
  const npy::Array ref = F32({3, 3}, {0.1f, 0.9f, 0, 0.5f, 0.2f, 0.3f, 1, 1, 0});
  const npy::Array got = F32({3, 3}, {0.2f, 0.7f, 0.1f, 0.1f, 0.2f, 0.3f, 0.9f, 1, 0});
  const GateResult r = ArgmaxGate(ref, got);
  EXPECT_FALSE(r.passed);
  EXPECT_NEAR(r.value, 2.0 / 3, 1e-12);
  EXPECT_EQ(r.detail,
            "argmax equal in 1/3 rows, 1 swapped at near-ties (reference scores closer than the row's noise) "
            "(first mismatch row 1: 0 vs 2)");
  // A gap wider than the noise on the row's other values is a real mismatch
  // however small; one within it is a near-tie.
  EXPECT_FALSE(ArgmaxGate(F32({3}, {1.0f, 0.999f, 0.5f}), F32({3}, {1.0f, 1.0001f, 0.5f})).passed);
  EXPECT_TRUE(ArgmaxGate(F32({3}, {1.0f, 0.9995f, 0.5f}), F32({3}, {0.999f, 0.9996f, 0.4995f})).passed);
  EXPECT_TRUE(ArgmaxGate(ref, ref).passed);
  // Ties resolve the same way on both sides; a NaN is the maximum (numpy).
  EXPECT_TRUE(ArgmaxGate(F32({2}, {1, 1}), F32({2}, {1, 1})).passed);
  EXPECT_FALSE(ArgmaxGate(F32({3}, {1, NAN, 3}), F32({3}, {1, 2, 3})).passed);
  // Same element count but other rows: [2,3] vs [3,2].
  EXPECT_EQ(KindOfGates([&] {
              ArgmaxGate(F32({2, 3}, {1, 2, 3, 4, 5, 6}), F32({3, 2}, {1, 2, 3, 4, 5, 6}));
            }),
            ErrorKind::kBadInput);
}

TEST(Gates, TopKSetsIgnoreOrder) {
  // Row 0: ref [5 1 4 3] -> {0,2}, got [4 1 5 0] -> {0,2} (other order, same set).
  // Row 1: ref [1 2 3 4] -> {2,3}, got [4 3 2 1] -> {0,1}.
  const npy::Array ref = F32({2, 4}, {5, 1, 4, 3, 1, 2, 3, 4});
  const npy::Array got = F32({2, 4}, {4, 1, 5, 0, 4, 3, 2, 1});
  const GateResult r = TopKGate(ref, got, 2);
  EXPECT_FALSE(r.passed);
  EXPECT_DOUBLE_EQ(r.value, 0.5);
  EXPECT_EQ(r.detail, "top-2 sets equal in 1/2 rows (first mismatch row 1)");
  EXPECT_TRUE(TopKGate(ref, got, 4).passed);  // K = width: every index
  // Ties go to the lower index on both sides: [3 3 3] top-2 = {0,1}.
  EXPECT_TRUE(TopKGate(F32({3}, {3, 3, 3}), F32({3}, {3, 3, 3}), 2).passed);
  EXPECT_EQ(KindOfGates([&] { TopKGate(ref, got, 5); }), ErrorKind::kBadInput);
}

TEST(Gates, BoxIouByHand) {
  // [0,0,2,2] and [1,1,3,3]: intersection 1, union 4 + 4 - 1 = 7.
  const double a[4] = {0, 0, 2, 2}, b[4] = {1, 1, 3, 3};
  EXPECT_DOUBLE_EQ(BoxIou(a, b, BoxFormat::kXyxy), 1.0 / 7);
  // The same boxes as centre/size.
  const double ca[4] = {1, 1, 2, 2}, cb[4] = {2, 2, 2, 2};
  EXPECT_DOUBLE_EQ(BoxIou(ca, cb, BoxFormat::kCxcywh), 1.0 / 7);
  EXPECT_DOUBLE_EQ(BoxIou(a, a, BoxFormat::kXyxy), 1.0);
  const double far[4] = {5, 5, 6, 6};
  EXPECT_DOUBLE_EQ(BoxIou(a, far, BoxFormat::kXyxy), 0.0);
  // Padding rows: two equal empty boxes agree, two different ones do not.
  const double zero[4] = {0, 0, 0, 0}, point[4] = {1, 1, 1, 1};
  EXPECT_DOUBLE_EQ(BoxIou(zero, zero, BoxFormat::kXyxy), 1.0);
  EXPECT_DOUBLE_EQ(BoxIou(zero, point, BoxFormat::kXyxy), 0.0);
}

TEST(Gates, BoxIouGateUsesTheMinimumBox) {
  // Box 0 identical (IoU 1); box 1 [0,0,1,1] vs [0,0,1,2]: 1 / 2. Min 0.5, mean 0.75.
  const npy::Array ref = F32({1, 2, 4}, {0, 0, 2, 2, 0, 0, 1, 1});
  const npy::Array got = F32({1, 2, 4}, {0, 0, 2, 2, 0, 0, 1, 2});
  const GateResult pass = BoxIouGate(ref, got, BoxFormat::kXyxy, 0.5);
  EXPECT_TRUE(pass.passed);
  EXPECT_DOUBLE_EQ(pass.value, 0.5);
  EXPECT_EQ(pass.detail, "box IoU min 0.5 (at box 1), mean 0.75 over 2 box(s)");
  EXPECT_FALSE(BoxIouGate(ref, got, BoxFormat::kXyxy, 0.6).passed);  // the mean would pass; the min does not
  EXPECT_EQ(KindOfGates([] {
              BoxIouGate(F32({2, 3}, {0, 0, 1, 1, 1, 1}), F32({2, 3}, {0, 0, 1, 1, 1, 1}), BoxFormat::kXyxy, 0.5);
            }),
            ErrorKind::kBadInput);
  // A NaN coordinate fails the gate.
  EXPECT_FALSE(BoxIouGate(F32({4}, {0, 0, 1, 1}), F32({4}, {0, 0, NAN, 1}), BoxFormat::kXyxy, 0.0).passed);
}

TEST(Gates, MaskIou) {
  // One 2x2 mask in [1,2,2,1]: REF > 0.5 at {0,2}, GOT at {0,1}: 1 / 3.
  const npy::Array ref = F32({1, 2, 2, 1}, {0.9f, 0.1f, 0.8f, 0.2f});
  const npy::Array got = F32({1, 2, 2, 1}, {0.7f, 0.6f, 0.4f, 0.1f});
  const GateResult one = MaskIouGate(ref, got, 0.5, 0.3);
  EXPECT_TRUE(one.passed);
  EXPECT_NEAR(one.value, 1.0 / 3, 1e-12);
  EXPECT_FALSE(MaskIouGate(ref, got, 0.5, 0.34).passed);
  // [2,2,2]: two masks, the second empty on both sides (IoU 1): min 1/3, mean 2/3.
  const npy::Array ref2 = F32({2, 2, 2}, {0.9f, 0.1f, 0.8f, 0.2f, 0, 0, 0, 0});
  const npy::Array got2 = F32({2, 2, 2}, {0.7f, 0.6f, 0.4f, 0.1f, 0, 0, 0, 0});
  const GateResult two = MaskIouGate(ref2, got2, 0.5, 0.3);
  EXPECT_NEAR(two.value, 1.0 / 3, 1e-12);
  EXPECT_NE(two.detail.find("mean 0.666667 over 2 mask(s)"), std::string::npos) << two.detail;
  // The threshold is strict: 0.5 itself is background.
  EXPECT_TRUE(MaskIouGate(F32({2, 2}, {0.5f, 0.5f, 0.5f, 0.5f}), F32({2, 2}, {0, 0, 0, 0}), 0.5, 1.0).passed);
}

TEST(Gates, EqualRoundsFloatsAndComparesIntegersExactly) {
  const GateResult r = EqualGate(I32({3}, {1, 2, 3}), I32({3}, {1, 2, 4}));
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.detail, "2/3 elements equal (first mismatch at flat index 2: 3 vs 4)");
  // Float token ids a hair off an integer still equal the int32 labels.
  EXPECT_TRUE(EqualGate(F32({2}, {1.0000001f, 2.9999f}), I32({2}, {1, 3})).passed);
  EXPECT_FALSE(EqualGate(F32({1}, {NAN}), F32({1}, {NAN})).passed);
}

TEST(Gates, ApplyDispatchesAndKeepsTheWrittenText) {
  const npy::Array ref = F32({1, 4}, {0, 0, 2, 2}), got = F32({1, 4}, {1, 1, 3, 3});
  const Metrics m = Compare(ref, got);
  GateOptions boxes;
  boxes.boxes = BoxFormat::kXyxy;
  const GateResult r = ApplyGate(ParseGate("iou>=0.10"), ref, got, m, boxes);
  EXPECT_EQ(r.gate, "iou>=0.10");
  EXPECT_TRUE(r.passed);  // 1/7 = 0.143
  GateOptions masks;
  masks.mask_threshold = 0.5;
  // As one 1x4 mask: REF > 0.5 at {2,3}, GOT at {0,1,2,3}: 2 / 4.
  EXPECT_DOUBLE_EQ(ApplyGate(ParseGate("iou>=0.1"), ref, got, m, masks).value, 0.5);
  GateOptions neither, both = boxes;
  both.mask_threshold = 0.5;
  EXPECT_EQ(KindOfGates([&] { ApplyGate(ParseGate("iou>=0.5"), ref, got, m, neither); }), ErrorKind::kUsage);
  EXPECT_EQ(KindOfGates([&] { ApplyGate(ParseGate("iou>=0.5"), ref, got, m, both); }), ErrorKind::kUsage);
  EXPECT_EQ(ApplyGate(ParseGate("out0:corr>=0.9"), ref, got, m, neither).gate, "corr>=0.9");
  // box_iou and mask_iou name what they read, so both can run with both options set.
  EXPECT_EQ(ParseGate("boxes:box_iou>=0.99").kind, GateKind::kBoxIou);
  EXPECT_EQ(ParseGate("masks:mask_iou>=0.995").tensor, "masks");
  EXPECT_DOUBLE_EQ(ApplyGate(ParseGate("box_iou>=0.1"), ref, got, m, both).value, 1.0 / 7.0);
  EXPECT_DOUBLE_EQ(ApplyGate(ParseGate("mask_iou>=0.1"), ref, got, m, both).value, 0.5);
  EXPECT_EQ(KindOfGates([&] { ApplyGate(ParseGate("box_iou>=0.5"), ref, got, m, masks); }), ErrorKind::kUsage);
  EXPECT_EQ(KindOfGates([&] { ApplyGate(ParseGate("mask_iou>=0.5"), ref, got, m, boxes); }), ErrorKind::kUsage);
}

TEST(Gates, MatchBoxesPairsDetectionsListedInAnotherOrder) {
  // Two sets of three boxes (xyxy); GOT lists set 0 as 2,0,1 with a small
  // shift, and set 1 unchanged except that its last box moved away.
  const npy::Array ref = F32({2, 3, 4}, {0, 0, 2, 2, 5, 5, 7, 7, 10, 0, 12, 2,  //
                                         0, 0, 1, 1, 2, 2, 3, 3, 4,  4, 5,  5});
  const npy::Array got = F32({2, 3, 4}, {10, 0, 12, 2.1f, 0, 0, 2, 2.1f, 5,  5,  7,  7,  //
                                         0,  0, 1,  1,    2, 2, 3, 3,    40, 40, 41, 41});
  const BoxMatching m = MatchBoxes(ref, got, BoxFormat::kXyxy);
  EXPECT_EQ(m.sets, 2);
  EXPECT_EQ(m.per_set, 3);
  EXPECT_EQ(m.got_index, (std::vector<int64_t>{1, 2, 0, 0, 1, 2}));
  EXPECT_EQ(m.moved, 3);
  // The box that moved away has no counterpart: a different selection.
  EXPECT_EQ(m.paired, (std::vector<bool>{true, true, true, true, true, false}));
  EXPECT_EQ(m.unpaired, 1);
  const npy::Array boxes = ApplyBoxMatching(got, m);
  EXPECT_GE(
      BoxIouGate(F32({3, 4}, std::vector<float>(ref.as<float>(), ref.as<float>() + 12)),
                 F32({3, 4}, std::vector<float>(boxes.as<float>(), boxes.as<float>() + 12)), BoxFormat::kXyxy, 0.9)
          .value,
      0.9);
  // Per-detection outputs follow their boxes: classes [2,3] and masks [2,3,2,2].
  const npy::Array classes = ApplyBoxMatching(F32({2, 3}, {7, 8, 9, 1, 2, 3}), m);
  EXPECT_EQ(std::vector<float>(classes.as<float>(), classes.as<float>() + 6), (std::vector<float>{8, 9, 7, 1, 2, 3}));
  std::vector<float> pixels(24);
  for (int i = 0; i < 24; ++i) pixels[i] = static_cast<float>(i / 4);
  const npy::Array masks = ApplyBoxMatching(F32({2, 3, 2, 2}, pixels), m);
  EXPECT_EQ(masks.as<float>()[0], 1.0f);
  EXPECT_EQ(masks.as<float>()[8], 0.0f);
  EXPECT_EQ(KindOfGates([&] { ApplyBoxMatching(F32({2, 2}, {0, 0, 0, 0}), m); }), ErrorKind::kBadInput);
  EXPECT_EQ(KindOfGates([&] {
              MatchBoxes(ref, F32({1, 3, 4}, std::vector<float>(12)), BoxFormat::kXyxy);
            }),
            ErrorKind::kBadInput);
}

}  // namespace
}  // namespace gpuclean::analyze
