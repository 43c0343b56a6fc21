// ctest-labels: litert
// The comparison family (EQUAL, NOT_EQUAL, LESS, LESS_EQUAL, GREATER,
// GREATER_EQUAL) against LiteRT.js, all six in one graph (bool outputs
// returned as int32 through CAST, as LiteRT.js cannot return bools): float32
// with many exact ties over broadcasting up to rank 6, int32, NaN, ±inf and
// signed zeros, int64 (made in the graph), and for EQUAL / NOT_EQUAL bool
// inputs (made in the graph). On ours: the bool output.
#include <functional>

#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

struct ComparisonOp {
  tfl::BuiltinOperator code;
  bool takes_bool;
  std::function<bool(float, float)> holds;
};

const std::vector<ComparisonOp>& Comparisons() {
  static const std::vector<ComparisonOp> ops = {
      {tfl::BuiltinOperator_EQUAL, true, std::equal_to<float>()},
      {tfl::BuiltinOperator_NOT_EQUAL, true, std::not_equal_to<float>()},
      {tfl::BuiltinOperator_LESS, false, std::less<float>()},
      {tfl::BuiltinOperator_LESS_EQUAL, false, std::less_equal<float>()},
      {tfl::BuiltinOperator_GREATER, false, std::greater<float>()},
      {tfl::BuiltinOperator_GREATER_EQUAL, false, std::greater_equal<float>()},
  };
  return ops;
}

TEST(Comparison, MatchesLiteRt) {
  CaseGraph g;
  GraphBuilder& b = g.b();
  const float inf = INFINITY;
  for (const ComparisonOp& c : Comparisons()) {
    const auto op = [code = c.code](GraphBuilder& gb, int x, int y) { return BoolOut(gb, gb.Binary(code, x, y)); };
    g.AddBinary(BroadcastPairs(), op, Tied(-2, 2), Tied(-2, 2), 4000);
    g.AddBinary(BroadcastPairs(), op, Ints(-2, 2), Ints(-2, 2), 4100);
    g.Output(op(b, g.Input(F32({7}, {NAN, 1.0f, NAN, -0.0f, inf, -inf, 2.0f})),
                g.Input(F32({7}, {1.0f, NAN, NAN, 0.0f, inf, inf, 2.0f}))));
    const int i = g.Input(RandomI32({3, 4}, 4200, -2, 2));
    const int j = g.Input(RandomI32({4}, 4201, -2, 2));
    g.Output(op(b, b.Cast(i, kI64), b.Cast(j, kI64)));
    if (c.takes_bool) {
      const int bx = g.Input(RandomF32({4, 5}, 4202, -1, 1));
      const int by = g.Input(RandomF32({5}, 4203, -1, 1));
      g.Output(BoolOut(b, b.Binary(c.code, PositiveMask(b, bx), PositiveMask(b, by))));
      g.Output(BoolOut(b, b.Binary(c.code, PositiveMask(b, bx), PositiveMask(b, bx))));
    }
  }
  g.ExpectMatches();
}

TEST(Comparison, BoolOutputOnOurs) {
  for (const ComparisonOp& c : Comparisons()) {
    SCOPED_TRACE(ir::BuiltinName(c.code));
    GraphBuilder b;
    const int in_x = b.Input("x", kF32, {4});
    const int in_y = b.Input("y", kF32, {4});
    b.Output(b.Binary(c.code, in_x, in_y));
    const auto out = RunOurs(b.Finish(), {F32({4}, {1, 2, 3, NAN}), F32({4}, {2, 2, 2, 2})});
    ASSERT_EQ(out[0].dtype, kBool);
    std::vector<uint8_t> want;
    for (float v : {1.0f, 2.0f, 3.0f, NAN}) want.push_back(c.holds(v, 2.0f) ? 1 : 0);
    EXPECT_EQ(ValuesOf<uint8_t>(out[0]), want);
  }
}

TEST(Comparison, OrderingsRejectBool) {
  for (const ComparisonOp& c : Comparisons()) {
    if (c.takes_bool) continue;
    SCOPED_TRACE(ir::BuiltinName(c.code));
    GraphBuilder b;
    const int x = b.Input("x", kF32, {3});
    const int mask = b.Greater(x, b.ConstF32("zero", {}, {0.0f}));
    b.Output(b.Binary(c.code, mask, mask));
    ExpectInterpreterRefuses(b.Finish());
  }
}

}  // namespace
}  // namespace gpuclean::testing::ewt
