// ctest-labels: litert
// GATHER against LiteRT.js: axes (negative too), batch_dims, scalar and
// multi-dimensional indices fed at run time, repeated indices, int32 and bool
// params; out-of-range indices are an error.
#include "exec/shape_test_util.h"

namespace gpuclean::testing {
namespace {

TEST(Gather, AxesAndIndexShapes) {
  GraphBuilder b;
  const int p = b.Input("p", tfl::TensorType_FLOAT32, {5, 4, 3});
  const int k = b.Input("k", tfl::TensorType_INT32, {2, 3});
  const int j = b.Input("j", tfl::TensorType_INT32, {4});
  b.Output(b.Gather(p, k, 0));
  b.Output(b.Gather(p, j, 1));
  b.Output(b.Gather(p, k, -1));
  b.Output(b.Gather(p, b.ConstI32("s", {}, {2}), 1));
  b.Output(b.Gather(p, b.ConstI32("r", {5}, {4, 4, 0, 1, 4}), 0));
  const ir::Model model = b.Finish();
  ExpectMatchesLiteRt(model, {RandomF32({5, 4, 3}, 231), I32({2, 3}, {0, 2, 1, 2, 2, 0}), I32({4}, {3, 0, 3, 1})});
}

TEST(Gather, BatchDims) {
  GraphBuilder b;
  const int p = b.Input("p", tfl::TensorType_FLOAT32, {2, 3, 4, 2});
  const int k = b.Input("k", tfl::TensorType_INT32, {2, 5});
  const int k2 = b.Input("k2", tfl::TensorType_INT32, {2, 3, 2});
  b.Output(b.Gather(p, k, 2, 1));
  b.Output(b.Gather(p, k, 1, 1));
  b.Output(b.Gather(p, k2, 2, 2));
  b.Output(b.Gather(p, k2, -2, -1));
  const ir::Model model = b.Finish();
  ExpectMatchesLiteRt(model,
                      {RandomF32({2, 3, 4, 2}, 232), RandomI32({2, 5}, 233, 0, 2), RandomI32({2, 3, 2}, 234, 0, 3)});
}

TEST(Gather, Int32AndBoolParams) {
  GraphBuilder b;
  const int p = b.Input("p", tfl::TensorType_INT32, {6, 2});
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {3, 5});
  const int k = b.Input("k", tfl::TensorType_INT32, {3});
  b.Output(b.Gather(p, k, 0));
  b.Output(AsFloat(b, b.Gather(PositiveMask(b, x), k, 1)));
  const ir::Model model = b.Finish();
  ExpectMatchesLiteRt(model, {RandomI32({6, 2}, 235, -99, 99), RandomF32({3, 5}, 236), I32({3}, {2, 0, 2})});
}

TEST(Gather, OutOfRangeIndexIsAnError) {
  GraphBuilder b;
  const int p = b.Input("p", tfl::TensorType_FLOAT32, {3, 2});
  const int k = b.Input("k", tfl::TensorType_INT32, {2});
  b.Output(b.Gather(p, k, 0));
  const ir::Model model = b.Finish();
  EXPECT_THROW(RunOurs(model, {RandomF32({3, 2}, 237), I32({2}, {1, 3})}), Error);
  EXPECT_THROW(RunOurs(model, {RandomF32({3, 2}, 237), I32({2}, {-1, 0})}), Error);
}

}  // namespace
}  // namespace gpuclean::testing
