// ctest-labels: litert
// PAD against LiteRT.js: zero paddings, one-sided, all dims, ranks 1 to 5,
// int32 and bool data.
#include "exec/shape_test_util.h"

namespace gpuclean::testing {
namespace {

TEST(Pad, PaddingsAndRanks) {
  GraphBuilder b;
  const int v = b.Input("v", tfl::TensorType_FLOAT32, {5});
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 4, 3, 2});
  const int f = b.Input("f", tfl::TensorType_FLOAT32, {2, 1, 3, 2, 2});
  b.Output(b.Pad(v, {{2, 3}}));
  b.Output(b.Pad(x, {{0, 0}, {1, 1}, {2, 0}, {0, 0}}));
  b.Output(b.Pad(x, {{1, 2}, {0, 3}, {1, 1}, {2, 1}}));
  b.Output(b.Pad(x, {{0, 0}, {0, 0}, {0, 0}, {0, 0}}));
  b.Output(b.Pad(f, {{0, 1}, {1, 0}, {0, 0}, {1, 1}, {0, 2}}));
  const ir::Model model = b.Finish();
  const std::vector<npy::Array> inputs = {RandomF32({5}, 141), RandomF32({1, 4, 3, 2}, 142),
                                          RandomF32({2, 1, 3, 2, 2}, 143)};
  ExpectMatchesLiteRt(model, inputs);
  ExpectThreadsAgree(model, inputs);
}

TEST(Pad, Int32AndBool) {
  GraphBuilder b;
  const int i = b.Input("i", tfl::TensorType_INT32, {2, 3});
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {3, 2});
  b.Output(b.Pad(i, {{1, 0}, {2, 2}}));
  b.Output(AsFloat(b, b.Pad(PositiveMask(b, x), {{1, 1}, {0, 1}})));
  const ir::Model model = b.Finish();
  ExpectMatchesLiteRt(model, {RandomI32({2, 3}, 144, 1, 9), RandomF32({3, 2}, 145)});
}

}  // namespace
}  // namespace gpuclean::testing
