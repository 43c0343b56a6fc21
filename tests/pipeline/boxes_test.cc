// Box host steps against the op patterns converters emit for them (SLICE,
// MUL, ADD, SUB, EXP, MINIMUM, CONCATENATION on the coordinates).
#include "gpuclean/host_steps.h"

#include "support/arrays.h"
#include "support/conformance.h"

namespace gpuclean::pipeline {
namespace {

using testing::ExpectArrayNear;
using testing::RandomF32;
using testing::RunGraphOp;

constexpr int32_t kBoxes = 12;

// The first and second coordinate pairs of [kBoxes,4] boxes.
std::pair<int, int> Halves(builder::GraphBuilder& g, int boxes) {
  return {g.Slice(boxes, {0, 0}, {kBoxes, 2}), g.Slice(boxes, {0, 2}, {kBoxes, 2})};
}

TEST(HostBoxes, ConvertMatchesTheCoordinatePattern) {
  const npy::Array boxes = RandomF32({kBoxes, 4}, 1, 0.1f, 1.0f);
  const auto to_xyxy = RunGraphOp({boxes}, [](builder::GraphBuilder& g, const std::vector<int>& in) {
    auto [xy, wh] = Halves(g, in[0]);
    const int half = g.Mul(wh, g.ConstF32("half", {}, {0.5f}));
    g.Output(g.Concatenation({g.Sub(xy, half), g.Add(xy, half)}, 1));
  });
  ExpectArrayNear(ConvertBoxes(boxes, BoxLayout::kCxcywh, BoxLayout::kXyxy), to_xyxy[0]);
  const auto to_cxcywh = RunGraphOp({boxes}, [](builder::GraphBuilder& g, const std::vector<int>& in) {
    auto [p0, p1] = Halves(g, in[0]);
    g.Output(g.Concatenation({g.Mul(g.Add(p0, p1), g.ConstF32("half", {}, {0.5f})), g.Sub(p1, p0)}, 1));
  });
  ExpectArrayNear(ConvertBoxes(boxes, BoxLayout::kXyxy, BoxLayout::kCxcywh), to_cxcywh[0]);
  ExpectArrayNear(ConvertBoxes(boxes, BoxLayout::kXyxy, BoxLayout::kXyxy), boxes);
  EXPECT_THROW(ConvertBoxes(RandomF32({3, 5}, 1, -2.0f, 2.0f), BoxLayout::kXyxy, BoxLayout::kCxcywh), Error);
}

TEST(HostBoxes, ReparamMatchesDetrRefinement) {
  const npy::Array deltas = RandomF32({kBoxes, 4}, 2, -1.0f, 1.0f);
  const npy::Array reference = RandomF32({kBoxes, 4}, 3, 0.05f, 0.9f);
  const auto oracle = RunGraphOp({deltas, reference}, [](builder::GraphBuilder& g, const std::vector<int>& in) {
    auto [dxy, dwh] = Halves(g, in[0]);
    auto [rxy, rwh] = Halves(g, in[1]);
    g.Output(g.Concatenation({g.Add(g.Mul(dxy, rwh), rxy), g.Mul(g.Exp(dwh), rwh)}, 1));
  });
  ExpectArrayNear(ReparamBoxes(deltas, reference), oracle[0], 1e-6f);
  // One reference set for a batch of deltas broadcasts.
  npy::Array batched = Concat({deltas, deltas}, 0);
  batched = Reshape(batched, {2, kBoxes, 4});
  const npy::Array twice = ReparamBoxes(batched, reference);
  EXPECT_EQ(twice.shape, (std::vector<int64_t>{2, kBoxes, 4}));
  EXPECT_EQ(std::vector<uint8_t>(twice.data.begin(), twice.data.begin() + twice.data.size() / 2),
            ReparamBoxes(deltas, reference).data);
}

TEST(HostBoxes, DecodeMatchesBoxCoderPattern) {
  npy::Array deltas = RandomF32({kBoxes, 4}, 4, -1.0f, 1.0f);
  deltas.as<float>()[2] = 60.0f;  // clamped at log(1000/16) before exp
  const npy::Array anchors = RandomF32({kBoxes, 4}, 5, 0.05f, 0.9f);
  const std::array<float, 4> weights = {10, 10, 5, 5};
  const float clamp = 4.135166556742356f;
  const auto oracle = RunGraphOp({deltas, anchors}, [&](builder::GraphBuilder& g, const std::vector<int>& in) {
    const int scaled = g.Div(in[0], g.ConstF32("w", {4}, {weights.begin(), weights.end()}));
    auto [dxy, dwh] = Halves(g, scaled);
    auto [axy, awh] = Halves(g, in[1]);
    const int wh = g.Mul(awh, g.Exp(g.Minimum(dwh, g.ConstF32("clamp", {}, {clamp}))));
    g.Output(g.Concatenation({g.Add(axy, g.Mul(dxy, awh)), wh}, 1));
  });
  ExpectArrayNear(DecodeBoxDeltas(deltas, anchors, weights), oracle[0], 1e-6f);
  EXPECT_THROW(DecodeBoxDeltas(deltas, anchors, {1, 0, 1, 1}), Error);
}

}  // namespace
}  // namespace gpuclean::pipeline
