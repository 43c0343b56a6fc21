// ctest-labels: litert
// CONV_2D on integer codes (onednn_codes.cc): a convolution whose weights
// and input are whole numbers of a power-of-two unit runs as oneDNN's 8-bit
// convolution and gives the correctly rounded result of the exact integer
// sum, bit for bit, at any thread count; LiteRT.js agrees within float
// tolerance; anything that is not codes runs in float as before.
#include "exec/conv_test_util.h"

namespace gpuclean::testing::convt {
namespace integer_codes {

using Codes = std::vector<int>;

// Codes in [lo, hi], deterministic.
Codes RandomCodes(int64_t n, uint32_t seed, int lo, int hi) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> pick(lo, hi);
  Codes c(static_cast<size_t>(n));
  for (int& v : c) v = pick(rng);
  return c;
}

std::vector<float> Scaled(const Codes& codes, float unit) {
  std::vector<float> v(codes.size());
  for (size_t i = 0; i < codes.size(); ++i) v[i] = static_cast<float>(codes[i]) * unit;
  return v;
}

struct ConvCase {
  Shape filter;  // [O, KH, KW, I]
  tfl::Padding padding;
  int stride = 1, dilation = 1;
  tfl::ActivationFunctionType act = tfl::ActivationFunctionType_NONE;
  Codes weights;
  float weight_unit = 1;
  std::vector<float> bias;
};

// The exact integer sum of codes, scaled by both units (a power of two:
// exact) plus the bias, rounded once to float and clamped: what the 8-bit
// path must give.
std::vector<float> CorrectlyRounded(const Shape& in, const Codes& x, float x_unit, const ConvCase& c,
                                    Shape* out_shape) {
  const int h = in[1], w = in[2], ch = in[3];
  const int o = c.filter[0], kh = c.filter[1], kw = c.filter[2];
  const int eh = (kh - 1) * c.dilation + 1, ew = (kw - 1) * c.dilation + 1;
  const bool same = c.padding == tfl::Padding_SAME;
  const int oh = same ? (h + c.stride - 1) / c.stride : (h - eh) / c.stride + 1;
  const int ow = same ? (w + c.stride - 1) / c.stride : (w - ew) / c.stride + 1;
  const int pt = same ? std::max(0, ((oh - 1) * c.stride + eh - h) / 2) : 0;
  const int pl = same ? std::max(0, ((ow - 1) * c.stride + ew - w) / 2) : 0;
  *out_shape = {1, oh, ow, o};
  const conv::Clamp clamp = conv::ActivationClamp(c.act);
  std::vector<float> out;
  for (int y = 0; y < oh; ++y)
    for (int xo = 0; xo < ow; ++xo)
      for (int f = 0; f < o; ++f) {
        int64_t sum = 0;
        for (int ky = 0; ky < kh; ++ky)
          for (int kx = 0; kx < kw; ++kx) {
            const int iy = y * c.stride - pt + ky * c.dilation, ix = xo * c.stride - pl + kx * c.dilation;
            if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
            for (int i = 0; i < ch; ++i)
              sum += static_cast<int64_t>(x[(static_cast<size_t>(iy) * w + ix) * ch + i]) *
                     c.weights[((static_cast<size_t>(f) * kh + ky) * kw + kx) * ch + i];
          }
        const float v = static_cast<float>(static_cast<double>(sum) * x_unit * c.weight_unit) + c.bias[f];
        out.push_back(clamp(v));
      }
  return out;
}

// The cases: weights spanning more than s8 (an offset), weights within s8,
// SAME padding (the zero point's padding), strides, a dilation, 1x1, RELU.
std::vector<ConvCase> Cases(int ch) {
  std::vector<ConvCase> cases;
  const auto add = [&](Shape filter, tfl::Padding padding, int stride, int dilation, tfl::ActivationFunctionType act,
                       int wlo, int whi, float unit, uint32_t seed) {
    ConvCase c{filter, padding, stride, dilation, act, {}, unit, {}};
    c.weights = RandomCodes(CountOf(filter), seed, wlo, whi);
    c.bias = RandomValues(filter[0], seed + 1, -3, 3);
    cases.push_back(c);
  };
  add({12, 3, 3, ch}, tfl::Padding_SAME, 1, 1, tfl::ActivationFunctionType_NONE, -200, 55, 0.25f, 1);
  add({7, 3, 3, ch}, tfl::Padding_SAME, 2, 1, tfl::ActivationFunctionType_RELU, -100, 100, 1.0f, 3);
  add({5, 3, 3, ch}, tfl::Padding_VALID, 1, 2, tfl::ActivationFunctionType_NONE, 0, 255, 0.5f, 5);
  add({9, 1, 1, ch}, tfl::Padding_VALID, 1, 1, tfl::ActivationFunctionType_RELU6, -128, 127, 0.125f, 7);
  add({16, 5, 5, ch}, tfl::Padding_SAME, 1, 1, tfl::ActivationFunctionType_NONE, -255, 0, 1.0f, 9);
  return cases;
}

ir::Model CodesModel(const Shape& in, const std::vector<ConvCase>& cases) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, in);
  for (size_t i = 0; i < cases.size(); ++i) {
    const ConvCase& c = cases[i];
    const std::string s = std::to_string(i);
    b.Output(b.Conv2D(x, b.ConstF32("w" + s, c.filter, Scaled(c.weights, c.weight_unit)),
                      b.ConstF32("b" + s, {c.filter[0]}, c.bias), c.padding, c.stride, c.stride, c.act, c.dilation,
                      c.dilation));
  }
  return b.Finish();
}

// Activation codes minus a zero point of 93 (range -93..162), times 2^-3:
// what dot-scale-first leaves in front of a quantized model's convolution.
TEST(IntegerCodeConv, ExactSumsRoundedOnceAtAnyThreadCount) {
  if (!conv::OneDnnAvailable()) GTEST_SKIP() << "built without oneDNN: the 8-bit path does not exist";
  const Shape in = {1, 9, 11, 20};
  const Codes x = RandomCodes(CountOf(in), 21, -93, 162);
  const float x_unit = 0.125f;
  const std::vector<ConvCase> cases = Cases(in[3]);
  const ir::Model model = CodesModel(in, cases);
  for (int threads : {1, 3}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    exec::InterpreterOptions options;
    options.threads = threads;
    const int64_t before = conv::IntegerCodeConvolutions();
    const std::vector<npy::Array> ours = RunOurs(model, {F32(in, Scaled(x, x_unit))}, options);
    EXPECT_EQ(conv::IntegerCodeConvolutions() - before, static_cast<int64_t>(cases.size()))
        << "every convolution should have run on codes";
    ASSERT_EQ(ours.size(), cases.size());
    for (size_t i = 0; i < cases.size(); ++i) {
      SCOPED_TRACE("conv " + std::to_string(i));
      Shape shape;
      const std::vector<float> want = CorrectlyRounded(in, x, x_unit, cases[i], &shape);
      ASSERT_EQ(ours[i].shape, std::vector<int64_t>(shape.begin(), shape.end()));
      ExpectFloatsNear(ValuesOf<float>(ours[i]), want, 0);
    }
  }
}

TEST(IntegerCodeConv, AgreesWithLiteRt) {
  const Shape in = {1, 9, 11, 20};
  ExpectMatchesLiteRtAllIsas(CodesModel(in, Cases(in[3])), {F32(in, Scaled(RandomCodes(CountOf(in), 22, 0, 255), 1))});
}

// Inputs that are not codes of one unit within 256 steps run in float: a
// fraction of the unit, a range of 1000 steps, a NaN. The result is the
// float convolution's (LiteRT.js's within tolerance) and the 8-bit path does
// not count it.
TEST(IntegerCodeConv, InputsThatAreNotCodesRunInFloat) {
  const Shape in = {1, 6, 7, 8};
  const std::vector<ConvCase> cases = Cases(in[3]);
  std::vector<float> fraction = Scaled(RandomCodes(CountOf(in), 31, -50, 50), 0.5f);
  fraction[17] += 0.1f;
  const std::vector<float> wide = Scaled(RandomCodes(CountOf(in), 32, 0, 1000), 1);
  for (const auto& [name, values] : {std::pair{"a fraction of the unit", fraction}, std::pair{"1000 steps", wide}}) {
    SCOPED_TRACE(name);
    const ir::Model model = CodesModel(in, cases);
    const int64_t before = conv::IntegerCodeConvolutions();
    ExpectMatchesLiteRt(model, {F32(in, values)});
    EXPECT_EQ(conv::IntegerCodeConvolutions(), before);
  }
  std::vector<float> with_nan = Scaled(RandomCodes(CountOf(in), 33, -50, 50), 1);
  with_nan[5] = std::numeric_limits<float>::quiet_NaN();
  const int64_t before = conv::IntegerCodeConvolutions();
  const std::vector<npy::Array> ours = RunOurs(CodesModel(in, cases), {F32(in, with_nan)});
  EXPECT_EQ(conv::IntegerCodeConvolutions(), before);
  EXPECT_TRUE(std::isnan(ValuesOf<float>(ours[0])[0])) << "the NaN's neighbourhood should be NaN";
}

// Weights that are not codes (a model's float weights, or whole numbers
// spanning more than 256 values) never take the path.
TEST(IntegerCodeConv, WeightsThatAreNotCodesRunInFloat) {
  const Shape in = {1, 6, 7, 8};
  std::vector<ConvCase> cases = Cases(in[3]);
  cases[0].weights = RandomCodes(CountOf(cases[0].filter), 41, -200, 200);  // 401 values
  cases[1].weight_unit = 0.3f;                                              // not a power of two
  cases.resize(2);
  const int64_t before = conv::IntegerCodeConvolutions();
  ExpectMatchesLiteRt(CodesModel(in, cases), {F32(in, Scaled(RandomCodes(CountOf(in), 42, 0, 255), 1))});
  EXPECT_EQ(conv::IntegerCodeConvolutions(), before);
}

}  // namespace integer_codes
}  // namespace gpuclean::testing::convt
