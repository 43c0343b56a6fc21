// ctest-labels: litert
// Elementwise op cases: unary maps, binary ops with broadcasting and fused
// activations, comparisons and logic (made observable through CAST/SELECT,
// since LiteRT.js cannot hand out bool tensors), casts and dequantisation.
#include "builder/litert_case.h"
#include "support/tflite_names.h"

namespace gpuclean::testing {
namespace {

using ::gpuclean::testing::tflite_names::kRelu;
using ::gpuclean::testing::tflite_names::kRelu6;

OpCase UnaryCase(std::string name, tfl::BuiltinOperator code, float low = -2.0f, float high = 2.0f,
                 std::function<float(float)> reference = nullptr) {
  OpCase c;
  c.name = std::move(name);
  c.build = [code] {
    return OneOp({{2, 3, 4}}, [code](GraphBuilder& b, const std::vector<int>& in) {
      return std::vector<int>{b.Unary(code, in[0])};
    });
  };
  c.low = low;
  c.high = high;
  if (reference)
    c.check = [reference](const Arrays& in, const Arrays& out) {
      std::vector<float> want;
      for (float x : Floats(in[0])) want.push_back(reference(x));
      ExpectFloatsNear(Floats(out[0]), want, 1e-6f);
    };
  return c;
}

// a [2,3,4] with b [4] (or [2,3,4]), checked against `reference` when given.
OpCase BinaryCase(std::string name, std::function<int(GraphBuilder&, int, int)> make, bool broadcast,
                  std::function<float(float, float)> reference = nullptr, float low = -2.0f, float high = 2.0f) {
  OpCase c;
  c.name = std::move(name);
  const Shape b_shape = broadcast ? Shape{4} : Shape{2, 3, 4};
  c.build = [make, b_shape] {
    return OneOp({{2, 3, 4}, b_shape}, [make](GraphBuilder& b, const std::vector<int>& in) {
      return std::vector<int>{make(b, in[0], in[1])};
    });
  };
  c.low = low;
  c.high = high;
  if (reference)
    c.check = [reference](const Arrays& in, const Arrays& out) {
      ExpectFloatsNear(Floats(out[0]), Broadcast2(in[0], in[1], {2, 3, 4}, reference), 1e-5f);
    };
  return c;
}

// A comparison's bool result, cast to float32 so LiteRT.js can return it.
OpCase ComparisonCase(std::string name, tfl::BuiltinOperator code, std::function<bool(float, float)> reference) {
  OpCase c;
  c.name = std::move(name);
  c.build = [code] {
    return OneOp({{2, 3, 4}, {4}}, [code](GraphBuilder& b, const std::vector<int>& in) {
      return std::vector<int>{b.Cast(b.Binary(code, in[0], in[1]), F32())};
    });
  };
  // Repeat values so that equality actually happens.
  c.inputs = [](const ir::Model&) {
    std::vector<float> a(24), b = {0.0f, 1.0f, -1.0f, 2.0f};
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(static_cast<int>(i % 5) - 2);
    return Arrays{FloatArray({2, 3, 4}, a), FloatArray({4}, b)};
  };
  c.check = [reference](const Arrays& in, const Arrays& out) {
    ExpectFloatsNear(
        Floats(out[0]),
        Broadcast2(in[0], in[1], {2, 3, 4}, [&](float x, float y) { return reference(x, y) ? 1.0f : 0.0f; }), 1e-5f);
  };
  return c;
}

// Logic ops on bools made in-graph from comparisons against zero.
OpCase LogicCase(std::string name, std::function<int(GraphBuilder&, int, int)> make,
                 std::function<bool(bool, bool)> reference) {
  OpCase c;
  c.name = std::move(name);
  c.build = [make] {
    return OneOp({{3, 4}, {3, 4}}, [make](GraphBuilder& b, const std::vector<int>& in) {
      const int zero = b.ConstF32("zero", {1}, {0.0f});
      const int p = b.Greater(in[0], zero);
      const int q = b.Greater(in[1], zero);
      return std::vector<int>{b.Cast(make(b, p, q), F32())};
    });
  };
  c.check = [reference](const Arrays& in, const Arrays& out) {
    ExpectFloatsNear(
        Floats(out[0]),
        Broadcast2(in[0], in[1], {3, 4}, [&](float x, float y) { return reference(x > 0, y > 0) ? 1.0f : 0.0f; }),
        1e-5f);
  };
  return c;
}

}  // namespace

std::vector<OpCase> ElementwiseCases() {
  std::vector<OpCase> cases;
  // ---- unary
  cases.push_back(UnaryCase("ABS", tfl::BuiltinOperator_ABS, -2, 2, [](float x) { return std::abs(x); }));
  cases.push_back(UnaryCase("NEG", tfl::BuiltinOperator_NEG, -2, 2, [](float x) { return -x; }));
  cases.push_back(UnaryCase("EXP", tfl::BuiltinOperator_EXP));
  cases.push_back(UnaryCase("LOG", tfl::BuiltinOperator_LOG, 0.1f, 4.0f));
  cases.push_back(UnaryCase("SQRT", tfl::BuiltinOperator_SQRT, 0.0f, 4.0f));
  cases.push_back(UnaryCase("RSQRT", tfl::BuiltinOperator_RSQRT, 0.1f, 4.0f));
  cases.push_back(UnaryCase("SQUARE", tfl::BuiltinOperator_SQUARE, -2, 2, [](float x) { return x * x; }));
  cases.push_back(UnaryCase("SIN", tfl::BuiltinOperator_SIN, -3, 3));
  cases.push_back(UnaryCase("COS", tfl::BuiltinOperator_COS, -3, 3));
  cases.push_back(UnaryCase("FLOOR", tfl::BuiltinOperator_FLOOR, -3, 3, [](float x) { return std::floor(x); }));
  cases.push_back(UnaryCase("CEIL", tfl::BuiltinOperator_CEIL, -3, 3, [](float x) { return std::ceil(x); }));
  cases.push_back(UnaryCase("TANH", tfl::BuiltinOperator_TANH));
  cases.push_back(UnaryCase("LOGISTIC", tfl::BuiltinOperator_LOGISTIC));
  cases.push_back(UnaryCase("RELU", tfl::BuiltinOperator_RELU, -2, 2, [](float x) { return std::max(x, 0.0f); }));
  cases.push_back(
      UnaryCase("RELU6", tfl::BuiltinOperator_RELU6, -4, 8, [](float x) { return std::clamp(x, 0.0f, 6.0f); }));
  cases.push_back(UnaryCase("RELU_N1_TO_1", tfl::BuiltinOperator_RELU_N1_TO_1, -2, 2,
                            [](float x) { return std::clamp(x, -1.0f, 1.0f); }));
  cases.push_back(UnaryCase("RELU_0_TO_1", tfl::BuiltinOperator_RELU_0_TO_1, -2, 2,
                            [](float x) { return std::clamp(x, 0.0f, 1.0f); }));
  cases.push_back(UnaryCase("ELU", tfl::BuiltinOperator_ELU));
  cases.push_back(UnaryCase("HARD_SWISH", tfl::BuiltinOperator_HARD_SWISH, -4, 4));

  OpCase leaky;
  leaky.name = "LEAKY_RELU_alpha_0_2";
  leaky.build = [] {
    return OneOp({{2, 3, 4}}, [](GraphBuilder& b, const std::vector<int>& in) {
      return std::vector<int>{b.LeakyRelu(in[0], 0.2f)};
    });
  };
  leaky.check = [](const Arrays& in, const Arrays& out) {
    std::vector<float> want;
    for (float x : Floats(in[0])) want.push_back(x > 0 ? x : 0.2f * x);
    ExpectFloatsNear(Floats(out[0]), want, 1e-5f);
  };
  cases.push_back(leaky);

  OpCase prelu;
  prelu.name = "PRELU_per_channel_alpha";
  prelu.build = [] {
    return OneOp({{1, 4, 4, 3}}, [](GraphBuilder& b, const std::vector<int>& in) {
      return std::vector<int>{b.Prelu(in[0], b.ConstF32("alpha", {1, 1, 3}, {0.1f, 0.2f, 0.3f}))};
    });
  };
  prelu.check = [](const Arrays& in, const Arrays& out) {
    const std::vector<float> x = Floats(in[0]);
    std::vector<float> want(x.size());
    for (size_t i = 0; i < x.size(); ++i) want[i] = x[i] > 0 ? x[i] : x[i] * 0.1f * static_cast<float>(i % 3 + 1);
    ExpectFloatsNear(Floats(out[0]), want, 1e-5f);
  };
  cases.push_back(prelu);

  for (bool approximate : {false, true}) {
    OpCase gelu;
    gelu.name = approximate ? "GELU_approximate" : "GELU_exact";
    gelu.build = [approximate] {
      return OneOp({{2, 8}}, [approximate](GraphBuilder& b, const std::vector<int>& in) {
        return std::vector<int>{b.Gelu(in[0], approximate)};
      });
    };
    gelu.check = [approximate](const Arrays& in, const Arrays& out) {
      std::vector<float> want;
      for (float x : Floats(in[0])) {
        const double v = x;
        want.push_back(
            static_cast<float>(approximate ? 0.5 * v * (1 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)))
                                           : 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)))));
      }
      ExpectFloatsNear(Floats(out[0]), want, 2e-3f);
    };
    cases.push_back(gelu);
  }

  // ---- binary
  cases.push_back(BinaryCase(
      "ADD_broadcast_relu", [](GraphBuilder& b, int x, int y) { return b.Add(x, y, kRelu); }, true,
      [](float x, float y) { return std::max(x + y, 0.0f); }));
  cases.push_back(BinaryCase(
      "SUB", [](GraphBuilder& b, int x, int y) { return b.Sub(x, y); }, false, [](float x, float y) { return x - y; }));
  cases.push_back(BinaryCase(
      "MUL_broadcast_relu6", [](GraphBuilder& b, int x, int y) { return b.Mul(x, y, kRelu6); }, true,
      [](float x, float y) { return std::clamp(x * y, 0.0f, 6.0f); }, -4, 4));
  cases.push_back(BinaryCase(
      "DIV", [](GraphBuilder& b, int x, int y) { return b.Div(x, y); }, true, [](float x, float y) { return x / y; },
      0.5f, 3.0f));
  cases.push_back(BinaryCase(
      "SQUARED_DIFFERENCE", [](GraphBuilder& b, int x, int y) { return b.SquaredDifference(x, y); }, true,
      [](float x, float y) { return (x - y) * (x - y); }));
  cases.push_back(BinaryCase(
      "MAXIMUM", [](GraphBuilder& b, int x, int y) { return b.Maximum(x, y); }, true,
      [](float x, float y) { return std::max(x, y); }));
  cases.push_back(BinaryCase(
      "MINIMUM", [](GraphBuilder& b, int x, int y) { return b.Minimum(x, y); }, false,
      [](float x, float y) { return std::min(x, y); }));
  cases.push_back(BinaryCase(
      "POW", [](GraphBuilder& b, int x, int y) { return b.Pow(x, y); }, true, nullptr, 0.5f, 2.0f));
  cases.push_back(BinaryCase(
      "FLOOR_DIV", [](GraphBuilder& b, int x, int y) { return b.FloorDiv(x, y); }, true,
      [](float x, float y) { return std::floor(x / y); }, 0.5f, 4.0f));

  // int32 arithmetic, fed from int32 graph inputs.
  OpCase int_add;
  int_add.name = "ADD_int32";
  int_add.build = [] {
    GraphBuilder b;
    const int x = b.Input("x", I32(), {2, 3});
    const int y = b.Input("y", I32(), {2, 3});
    b.Output(b.Add(x, y));
    return b.Finish();
  };
  int_add.check = [](const Arrays& in, const Arrays& out) {
    const auto x = Ints(in[0]), y = Ints(in[1]), got = Ints(out[0]);
    for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], x[i] + y[i]);
  };
  cases.push_back(int_add);

  OpCase int_floor_div;
  int_floor_div.name = "FLOOR_DIV_int32";
  int_floor_div.build = [] {
    GraphBuilder b;
    const int x = b.Input("x", I32(), {2, 3});
    b.Output(b.FloorDiv(x, b.ConstI32("divisor", {1}, {2})));
    return b.Finish();
  };
  int_floor_div.check = [](const Arrays& in, const Arrays& out) {
    const auto x = Ints(in[0]), got = Ints(out[0]);
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_EQ(got[i], static_cast<int32_t>(std::floor(x[i] / 2.0))) << "x=" << x[i];
  };
  cases.push_back(int_floor_div);

  // ---- comparisons and logic
  cases.push_back(ComparisonCase("EQUAL", tfl::BuiltinOperator_EQUAL, [](float x, float y) { return x == y; }));
  cases.push_back(ComparisonCase("NOT_EQUAL", tfl::BuiltinOperator_NOT_EQUAL, [](float x, float y) { return x != y; }));
  cases.push_back(ComparisonCase("LESS", tfl::BuiltinOperator_LESS, [](float x, float y) { return x < y; }));
  cases.push_back(
      ComparisonCase("LESS_EQUAL", tfl::BuiltinOperator_LESS_EQUAL, [](float x, float y) { return x <= y; }));
  cases.push_back(ComparisonCase("GREATER", tfl::BuiltinOperator_GREATER, [](float x, float y) { return x > y; }));
  cases.push_back(
      ComparisonCase("GREATER_EQUAL", tfl::BuiltinOperator_GREATER_EQUAL, [](float x, float y) { return x >= y; }));
  cases.push_back(LogicCase(
      "LOGICAL_AND", [](GraphBuilder& b, int p, int q) { return b.LogicalAnd(p, q); },
      [](bool p, bool q) { return p && q; }));
  cases.push_back(LogicCase(
      "LOGICAL_OR", [](GraphBuilder& b, int p, int q) { return b.LogicalOr(p, q); },
      [](bool p, bool q) { return p || q; }));
  cases.push_back(LogicCase(
      "LOGICAL_NOT", [](GraphBuilder& b, int p, int) { return b.LogicalNot(p); }, [](bool p, bool) { return !p; }));

  OpCase select;
  select.name = "SELECT_same_shape";
  select.build = [] {
    return OneOp({{3, 4}, {3, 4}}, [](GraphBuilder& b, const std::vector<int>& in) {
      return std::vector<int>{b.Select(b.Less(in[0], in[1]), in[0], in[1])};
    });
  };
  select.check = [](const Arrays& in, const Arrays& out) {
    ExpectFloatsNear(Floats(out[0]), Broadcast2(in[0], in[1], {3, 4}, [](float x, float y) { return x < y ? x : y; }),
                     1e-5f);
  };
  cases.push_back(select);

  OpCase select_v2;
  select_v2.name = "SELECT_V2_broadcast";
  select_v2.build = [] {
    return OneOp({{2, 3, 4}}, [](GraphBuilder& b, const std::vector<int>& in) {
      const int condition = b.ConstBool("condition", {4}, {true, false, true, false});
      const int fallback = b.ConstF32("fallback", {1}, {-7.0f});
      return std::vector<int>{b.SelectV2(condition, in[0], fallback)};
    });
  };
  select_v2.check = [](const Arrays& in, const Arrays& out) {
    const std::vector<float> x = Floats(in[0]);
    std::vector<float> want(x.size());
    for (size_t i = 0; i < x.size(); ++i) want[i] = i % 2 == 0 ? x[i] : -7.0f;
    ExpectFloatsNear(Floats(out[0]), want, 1e-5f);
  };
  cases.push_back(select_v2);

  // ---- casts and (de)quantisation
  OpCase cast;
  cast.name = "CAST_float32_to_int32";
  cast.build = [] {
    return OneOp({{2, 5}},
                 [](GraphBuilder& b, const std::vector<int>& in) { return std::vector<int>{b.Cast(in[0], I32())}; });
  };
  cast.low = -5;
  cast.high = 5;
  cast.check = [](const Arrays& in, const Arrays& out) {
    const auto x = Floats(in[0]);
    const auto got = Ints(out[0]);
    for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], static_cast<int32_t>(x[i])) << "x=" << x[i];
  };
  cases.push_back(cast);

  OpCase dequantize_fp16;
  dequantize_fp16.name = "DEQUANTIZE_fp16_constant";
  dequantize_fp16.build = [] {
    return OneOp({{2, 4}}, [](GraphBuilder& b, const std::vector<int>& in) {
      const int half = b.ConstF16FromF32("weights_fp16", {2, 4}, {0.5f, -1.25f, 3.0f, 65504.0f, 1e-3f, 0, -2, 7});
      return std::vector<int>{b.Add(in[0], b.Dequantize(half))};
    });
  };
  dequantize_fp16.check = [](const Arrays& in, const Arrays& out) {
    // 1e-3 is not a binary16 value: the nearest is 1.0004883e-3.
    const std::vector<float> weights = {0.5f, -1.25f, 3.0f, 65504.0f, 0.00100040436f, 0, -2, 7};
    const auto x = Floats(in[0]);
    std::vector<float> want;
    for (size_t i = 0; i < x.size(); ++i) want.push_back(x[i] + weights[i]);
    ExpectFloatsNear(Floats(out[0]), want, 1e-5f);
  };
  cases.push_back(dequantize_fp16);

  OpCase dequantize_int8;
  dequantize_int8.name = "DEQUANTIZE_int8_constant";
  dequantize_int8.build = [] {
    return OneOp({{2, 3}}, [](GraphBuilder& b, const std::vector<int>& in) {
      const int q = b.ConstInt8("weights_int8", {2, 3}, {-128, -1, 0, 1, 64, 127}, 0.5f, 2);
      return std::vector<int>{b.Add(in[0], b.Dequantize(q))};
    });
  };
  dequantize_int8.check = [](const Arrays& in, const Arrays& out) {
    const std::vector<int> q = {-128, -1, 0, 1, 64, 127};
    const auto x = Floats(in[0]);
    std::vector<float> want;
    for (size_t i = 0; i < x.size(); ++i) want.push_back(x[i] + 0.5f * static_cast<float>(q[i] - 2));
    ExpectFloatsNear(Floats(out[0]), want, 1e-5f);
  };
  cases.push_back(dequantize_int8);

  OpCase densify;
  densify.name = "DENSIFY_csr_constant";
  densify.build = [] {
    return OneOp({{3, 4}}, [](GraphBuilder& b, const std::vector<int>& in) {
      const int sparse = b.ConstSparseF32("sparse", {3, 4}, {0, 1, 0, 2, 0, 0, 0, 0, 3, 0, 4, 5});
      return std::vector<int>{b.Add(in[0], b.Densify(sparse))};
    });
  };
  densify.check = [](const Arrays& in, const Arrays& out) {
    const std::vector<float> dense = {0, 1, 0, 2, 0, 0, 0, 0, 3, 0, 4, 5};
    const auto x = Floats(in[0]);
    std::vector<float> want;
    for (size_t i = 0; i < x.size(); ++i) want.push_back(x[i] + dense[i]);
    ExpectFloatsNear(Floats(out[0]), want, 1e-5f);
  };
  cases.push_back(densify);
  return cases;
}

}  // namespace gpuclean::testing
