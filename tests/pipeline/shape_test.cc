// Concatenation and reshape host steps against the graph ops.
#include "gpuclean/host_steps.h"

#include "support/arrays.h"
#include "support/conformance.h"

namespace gpuclean::pipeline {
namespace {

using testing::ExpectArrayNear;
using testing::RandomF32;
using testing::RunGraphOp;

TEST(HostConcat, MatchesConcatenationOnEveryAxis) {
  for (int axis : {0, 1, 2, -1}) {
    std::vector<int64_t> sa = {2, 3, 4}, sb = {2, 3, 4};
    sb[axis < 0 ? 2 : axis] = 1;
    const npy::Array a = RandomF32(sa, 1, -2.0f, 2.0f), b = RandomF32(sb, 2, -2.0f, 2.0f);
    const auto oracle = RunGraphOp({a, b}, [&](builder::GraphBuilder& g, const std::vector<int>& in) {
      g.Output(g.Concatenation({in[0], in[1]}, axis));
    });
    SCOPED_TRACE(axis);
    ExpectArrayNear(Concat({a, b}, axis), oracle[0]);
  }
  EXPECT_THROW(Concat({RandomF32({2, 3}, 1, -2.0f, 2.0f), RandomF32({3, 3}, 2, -2.0f, 2.0f)}, 1), Error);
  EXPECT_THROW(Concat({RandomF32({2, 3}, 1, -2.0f, 2.0f), testing::I32({2, 3}, {0, 0, 0, 0, 0, 0})}, 0), Error);
  EXPECT_THROW(Concat({}, 0), Error);
}

TEST(HostReshape, MatchesReshapeWithAnInferredDimension) {
  const npy::Array x = RandomF32({1, 6, 4}, 3, -2.0f, 2.0f);
  const auto oracle = RunGraphOp({x}, [&](builder::GraphBuilder& g, const std::vector<int>& in) {
    g.Output(g.Reshape(in[0], {3, -1}));
  });
  ExpectArrayNear(Reshape(x, {3, -1}), oracle[0]);
  EXPECT_THROW(Reshape(x, {5, -1}), Error);
  EXPECT_THROW(Reshape(x, {-1, -1}), Error);
  EXPECT_THROW(Reshape(x, {25}), Error);
}

TEST(HostTile, MatchesTileOnFloatsAndIndices) {
  const npy::Array x = RandomF32({2, 1, 3}, 4, -2.0f, 2.0f);
  const auto oracle = RunGraphOp({x}, [&](builder::GraphBuilder& g, const std::vector<int>& in) {
    g.Output(g.Tile(in[0], {2, 4, 1}));
  });
  ExpectArrayNear(Tile(x, {2, 4, 1}), oracle[0]);
  // Repeating top-K indices along a new feature axis (torch's .repeat before gather).
  const npy::Array idx = testing::I32({1, 3, 1}, {4, 0, 2});
  const auto ints = RunGraphOp({idx}, [&](builder::GraphBuilder& g, const std::vector<int>& in) {
    g.Output(g.Tile(in[0], {1, 1, 5}));
  });
  ExpectArrayNear(Tile(idx, {1, 1, 5}), ints[0]);
  EXPECT_EQ(Tile(x, {1, 0, 1}).num_elements(), 0);
  EXPECT_THROW(Tile(x, {1, 1}), Error);
  EXPECT_THROW(Tile(x, {1, -1, 1}), Error);
}

}  // namespace
}  // namespace gpuclean::pipeline
