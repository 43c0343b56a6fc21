// top-K, GATHER and GatherElements host steps against the graph ops.
#include "gpuclean/host_steps.h"

#include "support/arrays.h"
#include "support/conformance.h"

namespace gpuclean::pipeline {
namespace {

using testing::ExpectArrayNear;
using testing::RandomF32;
using testing::RunGraphOp;

TEST(HostTopK, MatchesTopkV2IncludingTies) {
  // 300 proposals' max class scores, some tied: the top-100 selection.
  npy::Array scores = RandomF32({1, 300}, 11, -5.0f, 5.0f);
  for (int i = 0; i < 300; i += 7) scores.as<float>()[i] = 1.5f;
  for (int k : {1, 100, 300}) {
    const auto oracle = RunGraphOp({scores}, [&](builder::GraphBuilder& g, const std::vector<int>& in) {
      auto [values, indices] = g.TopKV2(in[0], k);
      g.Output(values);
      g.Output(indices);
    });
    const TopKResult r = TopK(scores, k);
    ExpectArrayNear(r.values, oracle[0]);
    ExpectArrayNear(r.indices, oracle[1]);
  }
  const npy::Array ints = testing::I32({2, 4}, {3, 9, 9, 1, -4, 0, 7, 7});
  const TopKResult r = TopK(ints, 2);
  EXPECT_EQ(std::vector<int32_t>(r.indices.as<int32_t>(), r.indices.as<int32_t>() + 4),
            (std::vector<int32_t>{1, 2, 2, 3}));
}

TEST(HostTopK, RefusesKOutsideTheAxis) {
  const npy::Array x = RandomF32({2, 5}, 1, -2.0f, 2.0f);
  EXPECT_THROW(TopK(x, 6), Error);
  EXPECT_THROW(TopK(x, -1), Error);
  EXPECT_EQ(TopK(x, 0).values.shape, (std::vector<int64_t>{2, 0}));
}

TEST(HostGather, MatchesGatherOnEveryAxisAndWithBatchDims) {
  const npy::Array params = RandomF32({2, 6, 5}, 3, -2.0f, 2.0f);
  const npy::Array idx = testing::I32({4}, {5, 0, 3, 3});
  for (int axis : {0, 1, 2, -1}) {
    npy::Array indices = idx;
    const int32_t limit = static_cast<int32_t>(params.shape[axis < 0 ? axis + 3 : axis]);
    for (int i = 0; i < 4; ++i) indices.as<int32_t>()[i] %= limit;
    const auto oracle = RunGraphOp({params, indices}, [&](builder::GraphBuilder& g, const std::vector<int>& in) {
      g.Output(g.Gather(in[0], in[1], axis));
    });
    SCOPED_TRACE(axis);
    ExpectArrayNear(Gather(params, indices, axis), oracle[0]);
  }
  // The query gather of a two-stage detector: [B,N,C] by [B,K] per batch.
  const npy::Array batched = testing::I32({2, 3}, {4, 1, 1, 0, 5, 2});
  const auto oracle = RunGraphOp({params, batched}, [&](builder::GraphBuilder& g, const std::vector<int>& in) {
    g.Output(g.Gather(in[0], in[1], 1, 1));
  });
  ExpectArrayNear(Gather(params, batched, 1, 1), oracle[0]);
}

TEST(HostGather, RefusesIndicesOutsideTheTable) {
  const npy::Array params = RandomF32({6, 2}, 3, -2.0f, 2.0f);
  try {
    Gather(params, testing::I32({3}, {0, 6, 1}), 0);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "host step gather: index 6 (element 1) is outside [0, 6) along axis 0 of [6,2]");
  }
  EXPECT_THROW(Gather(params, testing::I32({1}, {-1}), 0), Error);
  EXPECT_THROW(Gather(params, testing::I32({1}, {0}), 2), Error);
}

TEST(HostGatherNd, MatchesGatherNdAtEveryDepth) {
  const npy::Array params = RandomF32({3, 4, 2}, 6, -2.0f, 2.0f);
  const npy::Array depth1 = testing::I32({5, 1}, {2, 0, 1, 2, 0});
  const npy::Array depth2 = testing::I32({2, 2, 2}, {0, 3, 2, 1, 1, 0, 2, 3});
  const npy::Array depth3 = testing::I32({3, 3}, {0, 0, 1, 2, 3, 0, 1, 2, 1});
  for (const npy::Array* indices : {&depth1, &depth2, &depth3}) {
    const auto oracle = RunGraphOp({params, *indices}, [](builder::GraphBuilder& g, const std::vector<int>& in) {
      g.Output(g.GatherNd(in[0], in[1]));
    });
    ExpectArrayNear(GatherNd(params, *indices), oracle[0]);
  }
  EXPECT_THROW(GatherNd(params, testing::I32({1, 2}, {3, 0})), Error);
  EXPECT_THROW(GatherNd(params, testing::I32({1, 4}, {0, 0, 0, 0})), Error);
}

TEST(HostGatherElements, IsTakeAlongAxis) {
  // x [2,3], indices [2,2] along axis 1 (hand-computed, numpy take_along_axis).
  const npy::Array x = testing::F32({2, 3}, {1, 2, 3, 4, 5, 6});
  const npy::Array idx = testing::I32({2, 2}, {2, 0, -1, 1});
  const npy::Array out = GatherElements(x, idx, 1);
  EXPECT_EQ(out.shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(std::vector<float>(out.as<float>(), out.as<float>() + 4), (std::vector<float>{3, 1, 6, 5}));
  // Along axis 0 it equals GATHER_ND with the coordinates spelt out.
  const npy::Array idx0 = testing::I32({1, 3}, {1, 0, 1});
  const npy::Array coords = testing::I32({1, 3, 2}, {1, 0, 0, 1, 1, 2});
  const auto oracle = RunGraphOp(
      {x, coords}, [&](builder::GraphBuilder& g, const std::vector<int>& in) { g.Output(g.GatherNd(in[0], in[1])); });
  const npy::Array got = GatherElements(x, idx0, 0);
  EXPECT_EQ(std::vector<float>(got.as<float>(), got.as<float>() + 3),
            std::vector<float>(oracle[0].as<float>(), oracle[0].as<float>() + 3));
  EXPECT_THROW(GatherElements(x, testing::I32({2, 1}, {3, 0}), 1), Error);
  EXPECT_THROW(GatherElements(x, testing::I32({2}, {0, 0}), 1), Error);
}

}  // namespace
}  // namespace gpuclean::pipeline
