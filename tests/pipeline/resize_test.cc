// Mask upsampling against RESIZE_BILINEAR in its three coordinate modes.
#include "gpuclean/host_steps.h"

#include "support/arrays.h"
#include "support/conformance.h"

namespace gpuclean::pipeline {
namespace {

TEST(HostResize, MatchesResizeBilinearInEveryMode) {
  // Three 7x9 mask logits to 28x20 (up in y, up in x) and to 3x4 (down).
  const npy::Array masks = testing::RandomF32({3, 7, 9}, 5, -4.0f, 4.0f);
  npy::Array nhwc = Reshape(masks, {3, 7, 9, 1});
  for (auto size : {std::pair{28, 20}, std::pair{3, 4}})
    for (auto mode : {std::pair{false, false}, std::pair{true, false}, std::pair{false, true}}) {
      const int h = size.first, w = size.second;
      const bool align = mode.first, half = mode.second;
      const auto oracle = testing::RunGraphOp({nhwc}, [&](builder::GraphBuilder& g, const std::vector<int>& in) {
        g.Output(g.ResizeBilinear(in[0], h, w, align, half));
      });
      SCOPED_TRACE(::testing::Message() << h << "x" << w << " align " << align << " half " << half);
      testing::ExpectArrayNear(ResizeBilinear(masks, h, w, align, half), Reshape(oracle[0], {3, h, w}), 1e-6f);
    }
  EXPECT_THROW(ResizeBilinear(masks, 0, 4), Error);
  EXPECT_THROW(ResizeBilinear(masks, 4, 4, true, true), Error);
}

}  // namespace
}  // namespace gpuclean::pipeline
