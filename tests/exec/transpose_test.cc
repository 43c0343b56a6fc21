// ctest-labels: litert
// TRANSPOSE against LiteRT.js: 2-D to 6-D permutations, the tiled 2-D-like
// path on a larger tensor, planes to pixels of a few channels, int32 and
// bool data.
#include "exec/shape_test_util.h"

namespace gpuclean::testing {
namespace {

TEST(Transpose, RanksTwoToSix) {
  GraphBuilder b;
  const int m = b.Input("m", tfl::TensorType_FLOAT32, {5, 7});
  const int t = b.Input("t", tfl::TensorType_FLOAT32, {2, 3, 4});
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {2, 3, 5, 4});
  const int f = b.Input("f", tfl::TensorType_FLOAT32, {2, 1, 3, 2, 3});
  const int s = b.Input("s", tfl::TensorType_FLOAT32, {2, 3, 1, 2, 2, 3});
  b.Output(b.Transpose(m, {1, 0}));
  b.Output(b.Transpose(t, {2, 0, 1}));
  b.Output(b.Transpose(t, {0, 2, 1}));
  b.Output(b.Transpose(x, {0, 3, 1, 2}));  // NHWC -> NCHW
  b.Output(b.Transpose(x, {0, 2, 3, 1}));  // NCHW -> NHWC
  b.Output(b.Transpose(x, {3, 2, 1, 0}));
  b.Output(b.Transpose(x, {0, 1, 2, 3}));
  b.Output(b.Transpose(f, {4, 2, 0, 3, 1}));
  b.Output(b.Transpose(s, {5, 3, 1, 0, 4, 2}));
  const ir::Model model = b.Finish();
  ExpectMatchesLiteRt(model, {RandomF32({5, 7}, 101), RandomF32({2, 3, 4}, 102), RandomF32({2, 3, 5, 4}, 103),
                              RandomF32({2, 1, 3, 2, 3}, 104), RandomF32({2, 3, 1, 2, 2, 3}, 105)});
}

TEST(Transpose, LargeTiledWithThreads) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {2, 67, 45, 40});
  b.Output(b.Transpose(x, {0, 3, 1, 2}));
  b.Output(b.Transpose(x, {0, 2, 3, 1}));
  b.Output(b.Transpose(x, {2, 1, 0, 3}));
  const ir::Model model = b.Finish();
  const std::vector<npy::Array> inputs = {RandomF32({2, 67, 45, 40}, 106)};
  ExpectMatchesLiteRt(model, inputs);
  ExpectThreadsAgree(model, inputs, 4);
}

// NCHW -> NHWC of 2, 3 and 4 channels (an image input): the channels'
// planes interleaved into pixels, float and int32, odd plane sizes, threads.
TEST(Transpose, PlanesToPixelsOfTwoToFourChannels) {
  GraphBuilder b;
  std::vector<npy::Array> inputs;
  for (int32_t c : {2, 3, 4}) {
    const int x = b.Input("x" + std::to_string(c), tfl::TensorType_FLOAT32, {2, c, 37, 53});
    b.Output(b.Transpose(x, {0, 2, 3, 1}));
    inputs.push_back(RandomF32({2, c, 37, 53}, 110 + c));
  }
  const int i = b.Input("i", tfl::TensorType_INT32, {1, 3, 19, 23});
  b.Output(b.Transpose(i, {0, 2, 3, 1}));
  inputs.push_back(RandomI32({1, 3, 19, 23}, 115, -1000, 1000));
  const ir::Model model = b.Finish();
  ExpectMatchesLiteRt(model, inputs);
  ExpectThreadsAgree(model, inputs, 3);
}

// Heads split and merged ([tokens, heads, dim] <-> [heads, tokens, dim]):
// contiguous rows of 16 to 256 bytes, copied as whole vector moves.
TEST(Transpose, RowsOfSixteenToTwoHundredFiftySixBytes) {
  GraphBuilder b;
  std::vector<npy::Array> inputs;
  for (int32_t dim : {4, 8, 16, 32, 64, 5}) {
    const int x = b.Input("x" + std::to_string(dim), tfl::TensorType_FLOAT32, {7, 3, dim});
    b.Output(b.Transpose(x, {1, 0, 2}));
    inputs.push_back(RandomF32({7, 3, dim}, 120 + dim));
  }
  const ir::Model model = b.Finish();
  ExpectMatchesLiteRt(model, inputs);
}

TEST(Transpose, Int32AndBool) {
  GraphBuilder b;
  const int i = b.Input("i", tfl::TensorType_INT32, {3, 4, 5});
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {4, 9});
  b.Output(b.Transpose(i, {2, 0, 1}));
  b.Output(AsFloat(b, b.Transpose(PositiveMask(b, x), {1, 0})));
  const ir::Model model = b.Finish();
  ExpectMatchesLiteRt(model, {RandomI32({3, 4, 5}, 107, -100, 100), RandomF32({4, 9}, 108)});
}

}  // namespace
}  // namespace gpuclean::testing
