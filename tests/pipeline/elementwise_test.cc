// The elementwise host steps against the graph ops they replace.
#include "gpuclean/host_steps.h"

#include <cmath>

#include "support/arrays.h"
#include "support/conformance.h"

namespace gpuclean::pipeline {
namespace {

using testing::ExpectArrayNear;
using testing::RandomF32;
using testing::RunGraphOp;

struct BinaryCase {
  BinaryFn fn;
  tfl::BuiltinOperator op;
};

TEST(HostElementwise, BinaryStepsMatchTheirOpsUnderBroadcasting) {
  const BinaryCase cases[] = {
      {BinaryFn::kAdd, tfl::BuiltinOperator_ADD},         {BinaryFn::kSub, tfl::BuiltinOperator_SUB},
      {BinaryFn::kMul, tfl::BuiltinOperator_MUL},         {BinaryFn::kDiv, tfl::BuiltinOperator_DIV},
      {BinaryFn::kMaximum, tfl::BuiltinOperator_MAXIMUM}, {BinaryFn::kMinimum, tfl::BuiltinOperator_MINIMUM}};
  // Same shape, a row against a matrix, a scalar-like [1] and two-sided.
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> shapes = {
      {{2, 3, 4}, {2, 3, 4}}, {{2, 3, 4}, {4}}, {{1, 5}, {1}}, {{3, 1}, {1, 4}}};
  uint32_t seed = 1;
  for (const BinaryCase& c : cases)
    for (const auto& [sa, sb] : shapes) {
      const npy::Array a = RandomF32(sa, seed++, -2.0f, 2.0f), b = RandomF32(sb, seed++, 0.5f, 2.0f);
      const auto oracle = RunGraphOp({a, b}, [&](builder::GraphBuilder& g, const std::vector<int>& in) {
        g.Output(g.Binary(c.op, in[0], in[1]));
      });
      SCOPED_TRACE(tfl::EnumNameBuiltinOperator(c.op));
      ExpectArrayNear(Binary(c.fn, a, b), oracle[0]);
    }
}

TEST(HostElementwise, IntegerStepsMatchTheirOps) {
  const npy::Array a = testing::I32({4}, {1, -7, 100000, 5});
  const npy::Array b = testing::I32({4}, {2, 3, 1, -5});
  for (auto [fn, op] :
       {std::pair{BinaryFn::kAdd, tfl::BuiltinOperator_ADD}, std::pair{BinaryFn::kMul, tfl::BuiltinOperator_MUL},
        std::pair{BinaryFn::kMaximum, tfl::BuiltinOperator_MAXIMUM}}) {
    const tfl::BuiltinOperator code = op;  // lambdas cannot capture structured bindings (clang 14)
    const auto oracle = RunGraphOp(
        {a, b}, [&](builder::GraphBuilder& g, const std::vector<int>& in) { g.Output(g.Binary(code, in[0], in[1])); });
    ExpectArrayNear(Binary(fn, a, b), oracle[0]);
  }
  EXPECT_THROW(Binary(BinaryFn::kDiv, a, b), Error);
}

TEST(HostElementwise, UnaryStepsMatchTheirOps) {
  const std::pair<UnaryFn, tfl::BuiltinOperator> cases[] = {
      {UnaryFn::kSigmoid, tfl::BuiltinOperator_LOGISTIC}, {UnaryFn::kExp, tfl::BuiltinOperator_EXP},
      {UnaryFn::kRelu, tfl::BuiltinOperator_RELU},        {UnaryFn::kTanh, tfl::BuiltinOperator_TANH},
      {UnaryFn::kNeg, tfl::BuiltinOperator_NEG},          {UnaryFn::kAbs, tfl::BuiltinOperator_ABS}};
  // Logits as a detector emits them, including saturating ones.
  npy::Array x = RandomF32({3, 50}, 7, -12.0f, 12.0f);
  x.as<float>()[0] = -90.0f;
  x.as<float>()[1] = 90.0f;
  for (auto [fn, op] : cases) {
    const tfl::BuiltinOperator code = op;
    const auto oracle =
        RunGraphOp({x}, [&](builder::GraphBuilder& g, const std::vector<int>& in) { g.Output(g.Unary(code, in[0])); });
    SCOPED_TRACE(tfl::EnumNameBuiltinOperator(op));
    // Transcendentals: a few ulp apart from the kernels' formulations.
    ExpectArrayNear(Unary(fn, x), oracle[0], 1e-6f);
  }
  const npy::Array positive = RandomF32({64}, 8, 0.01f, 100.0f);
  for (auto [fn, op] :
       {std::pair{UnaryFn::kLog, tfl::BuiltinOperator_LOG}, std::pair{UnaryFn::kSqrt, tfl::BuiltinOperator_SQRT}}) {
    const tfl::BuiltinOperator code = op;
    const auto oracle = RunGraphOp(
        {positive}, [&](builder::GraphBuilder& g, const std::vector<int>& in) { g.Output(g.Unary(code, in[0])); });
    ExpectArrayNear(Unary(fn, positive), oracle[0], 1e-6f);
  }
}

TEST(HostElementwise, AffineIsMulThenAddOfScalars) {
  const npy::Array x = RandomF32({2, 7, 3}, 3, -50.0f, 50.0f);
  const auto oracle = RunGraphOp({x}, [&](builder::GraphBuilder& g, const std::vector<int>& in) {
    g.Output(g.Add(g.Mul(in[0], g.ConstF32("s", {}, {0.5f})), g.ConstF32("o", {}, {-1.25f})));
  });
  ExpectArrayNear(Affine(x, 0.5f, -1.25f), oracle[0]);
}

TEST(HostElementwise, ThresholdIsGreaterAgainstAScalar) {
  npy::Array x = RandomF32({4, 9}, 4, -2.0f, 2.0f);
  x.as<float>()[3] = 0.25f;  // equal to the threshold: not above it
  const auto oracle = RunGraphOp({x}, [&](builder::GraphBuilder& g, const std::vector<int>& in) {
    g.Output(g.Greater(in[0], g.ConstF32("t", {}, {0.25f})));
  });
  ExpectArrayNear(Threshold(x, 0.25f), oracle[0]);
  EXPECT_EQ(Threshold(x, 0.25f).as<uint8_t>()[3], 0);
}

TEST(HostElementwise, ComparisonsMatchTheirOpsOnFloatsAndInts) {
  const std::pair<CompareFn, tfl::BuiltinOperator> cases[] = {
      {CompareFn::kLess, tfl::BuiltinOperator_LESS},
      {CompareFn::kLessEqual, tfl::BuiltinOperator_LESS_EQUAL},
      {CompareFn::kGreater, tfl::BuiltinOperator_GREATER},
      {CompareFn::kGreaterEqual, tfl::BuiltinOperator_GREATER_EQUAL},
      {CompareFn::kEqual, tfl::BuiltinOperator_EQUAL},
      {CompareFn::kNotEqual, tfl::BuiltinOperator_NOT_EQUAL}};
  npy::Array fa = RandomF32({3, 4}, 5, -2.0f, 2.0f), fb = RandomF32({4}, 6, -2.0f, 2.0f);
  fa.as<float>()[1] = fb.as<float>()[1];  // ties decide <= and ==
  const npy::Array ia = testing::I32({2, 3}, {-3, 0, 7, 2, -1, 5}), ib = testing::I32({1}, {0});
  for (const auto& [fn, op] : cases) {
    SCOPED_TRACE(tfl::EnumNameBuiltinOperator(op));
    for (const auto& [a, b] : {std::pair{fa, fb}, std::pair{ia, ib}}) {
      const auto oracle = RunGraphOp({a, b}, [&, op = op](builder::GraphBuilder& g, const std::vector<int>& in) {
        g.Output(g.Binary(op, in[0], in[1]));
      });
      ExpectArrayNear(Compare(fn, a, b), oracle[0]);
    }
  }
  EXPECT_THROW(Compare(CompareFn::kLess, fa, ia), Error);
}

TEST(HostElementwise, SelectMatchesSelectV2UnderBroadcasting) {
  // Wrapping negative indices, as converted GatherElements does:
  // select(idx < 0, idx + size, idx).
  const npy::Array idx = testing::I32({2, 3}, {-1, 0, 4, -6, 2, 5}), size = testing::I32({}, {6});
  const auto oracle = RunGraphOp({idx, size}, [&](builder::GraphBuilder& g, const std::vector<int>& in) {
    g.Output(g.SelectV2(g.Less(in[0], g.ConstI32("zero", {}, {0})), g.Add(in[0], in[1]), in[0]));
  });
  const npy::Array wrapped =
      Select(Compare(CompareFn::kLess, idx, testing::I32({}, {0})), Binary(BinaryFn::kAdd, idx, size), idx);
  ExpectArrayNear(wrapped, oracle[0]);
  EXPECT_EQ(wrapped.as<int32_t>()[0], 5);
  // A per-row condition against float operands.
  const npy::Array cond = Threshold(RandomF32({3, 1}, 7, -2.0f, 2.0f), 0.0f), a = RandomF32({3, 4}, 8, -2.0f, 2.0f),
                   b = RandomF32({4}, 9, -2.0f, 2.0f);
  const auto rows = RunGraphOp({cond, a, b}, [&](builder::GraphBuilder& g, const std::vector<int>& in) {
    g.Output(g.SelectV2(in[0], in[1], in[2]));
  });
  ExpectArrayNear(Select(cond, a, b), rows[0]);
  EXPECT_THROW(Select(a, a, b), Error);  // condition not bool
}

TEST(HostElementwise, CastMatchesCastBetweenFloatIntAndBool) {
  npy::Array x = RandomF32({2, 5}, 10, -5.0f, 5.0f);
  x.as<float>()[0] = -2.5f;  // truncates toward zero
  x.as<float>()[1] = 0.0f;
  const std::pair<ir::DType, ir::DType> casts[] = {{tfl::TensorType_FLOAT32, tfl::TensorType_INT32},
                                                   {tfl::TensorType_FLOAT32, tfl::TensorType_BOOL},
                                                   {tfl::TensorType_INT32, tfl::TensorType_FLOAT32},
                                                   {tfl::TensorType_BOOL, tfl::TensorType_FLOAT32}};
  for (const auto& [from, to] : casts) {
    SCOPED_TRACE(std::string(ir::DTypeName(from)) + "->" + std::string(ir::DTypeName(to)));
    const npy::Array in = from == tfl::TensorType_FLOAT32 ? x : Cast(x, from);
    const auto oracle = RunGraphOp(
        {in}, [&, to = to](builder::GraphBuilder& g, const std::vector<int>& ids) { g.Output(g.Cast(ids[0], to)); });
    ExpectArrayNear(Cast(in, to), oracle[0]);
  }
  EXPECT_EQ(Cast(x, tfl::TensorType_INT32).as<int32_t>()[0], -2);
  npy::Array huge = RandomF32({1}, 11, -2.0f, 2.0f);
  huge.as<float>()[0] = 3e9f;
  EXPECT_THROW(Cast(huge, tfl::TensorType_INT32), Error);
  huge.as<float>()[0] = NAN;
  EXPECT_THROW(Cast(huge, tfl::TensorType_INT32), Error);
}

TEST(HostElementwise, RefusesShapesThatDoNotBroadcastAndMixedDtypes) {
  const npy::Array a = RandomF32({2, 3}, 1, -2.0f, 2.0f), b = RandomF32({4}, 2, -2.0f, 2.0f);
  try {
    Binary(BinaryFn::kAdd, a, b);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadInput);
    EXPECT_STREQ(e.what(), "host step add: shapes [2,3] and [4] do not broadcast");
  }
  EXPECT_THROW(Binary(BinaryFn::kMul, a, testing::I32({3}, {1, 2, 3})), Error);
  npy::Array truncated = a;
  truncated.data.resize(8);
  EXPECT_THROW(Unary(UnaryFn::kExp, truncated), Error);
}

}  // namespace
}  // namespace gpuclean::pipeline
