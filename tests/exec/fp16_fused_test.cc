// The fp16-fused numeric mode (mldrift-webgpu@2.5.3's model): float
// arithmetic, half only where a tensor is written between kernels. Each test
// pins one part of the rule in docs/numerics.md on the interpreter; the same
// graphs run against the real WebGPU delegate in
// tests/analyze/fp16_fused_vs_webgpu_test.cc.
#include <gtest/gtest.h>

#include <fp16.h>

#include <algorithm>
#include <cmath>

#include "gpuclean/builder.h"
#include "gpuclean/synth.h"
#include "support/conformance.h"
#include "support/tflite_names.h"

namespace gpuclean {
namespace {

using builder::GraphBuilder;
using exec::Precision;
using ::gpuclean::testing::tflite_names::F32;

float Half(float x) { return fp16_ieee_to_fp32_value(fp16_ieee_from_fp32_value(x)); }

int ScalarFp16Fused(GraphBuilder& b, const std::string& name, float v) { return b.ConstF32(name, {}, {v}); }

npy::Array Filled(std::vector<int64_t> shape, float lo, float hi, uint32_t seed = 1) {
  return synth::HashUniform(std::move(shape), lo, hi, seed);
}

std::vector<float> Out(const ir::Model& m, const std::vector<npy::Array>& in, Precision p, int index = 0) {
  const npy::Array a = testing::RunOurs(m, in, {.precision = p}).at(index);
  return std::vector<float>(a.as<float>(), a.as<float>() + a.num_elements());
}

int NonFiniteFp16Fused(const std::vector<float>& v) {
  int n = 0;
  for (float x : v) n += !std::isfinite(x);
  return n;
}

TEST(Fp16Fused, ParsesAndNamesTheMode) {
  EXPECT_EQ(exec::ParsePrecision("fp16-fused"), Precision::kFp16Fused);
  EXPECT_EQ(exec::PrecisionName(Precision::kFp16Fused), "fp16-fused");
  EXPECT_EQ(exec::PrecisionNames().size(), 5u);  // fp32, fp16-storage, fp16-compute, fp16-fused, fp16-f32acc
}

TEST(Fp16Fused, AnElementwiseChainStaysInFloatUntilItsOutputIsStored) {
  // (x * 1000) * 0.001 at x ~ 100: the 1e5 in between never reaches memory.
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 64});
  b.Output(b.Mul(b.Mul(x, ScalarFp16Fused(b, "k", 1000.0f)), ScalarFp16Fused(b, "inv_k", 1e-3f)));
  const ir::Model m = b.Finish();
  const npy::Array in = Filled({1, 64}, 90, 110);
  const std::vector<float> fused = Out(m, {in}, Precision::kFp16Fused);
  EXPECT_EQ(NonFiniteFp16Fused(Out(m, {in}, Precision::kFp16Storage)), 64);
  for (int i = 0; i < 64; ++i) {
    const float xi = Half(in.as<float>()[i]);  // graph inputs are uploaded as half
    EXPECT_EQ(fused[i], Half(xi * 1000.0f * 1e-3f)) << i;
  }
}

TEST(Fp16Fused, ATensorReadByTwoKernelsIsStored) {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 64});
  int t = b.Mul(x, ScalarFp16Fused(b, "k", 1000.0f));
  b.Output(b.Mul(t, ScalarFp16Fused(b, "a", 1e-3f)));
  b.Output(b.Mul(t, ScalarFp16Fused(b, "b", 2e-3f)));
  const ir::Model m = b.Finish();
  EXPECT_EQ(NonFiniteFp16Fused(Out(m, {Filled({1, 64}, 90, 110)}, Precision::kFp16Fused, 1)), 64);
  EXPECT_FALSE(exec::KeptInFloat(m.main())[m.main().ops[0].outputs[0]]);
}

TEST(Fp16Fused, ANonElementwiseConsumerMakesTheTensorBeStored) {
  for (bool concat : {false, true}) {
    GraphBuilder b;
    int x = b.Input("x", F32, {1, 64});
    int sq = b.Square(x);
    b.Output(b.Mul(concat ? b.Concatenation({sq, x}, 1) : sq, ScalarFp16Fused(b, "k", 1e-3f)));
    const ir::Model m = b.Finish();
    const int overflowed = NonFiniteFp16Fused(Out(m, {Filled({1, 64}, 300, 440)}, Precision::kFp16Fused));
    if (concat)
      EXPECT_EQ(overflowed, 64);
    else
      EXPECT_EQ(overflowed, 0);
  }
}

TEST(Fp16Fused, ABinaryOpIsLinkedOnTheOperandComputedLast) {
  // ADD(big, small) * 1e-3, big = 1000 x: finite only when big's kernel runs last.
  for (bool big_last : {true, false}) {
    GraphBuilder b;
    int x = b.Input("x", F32, {1, 64});
    int y = b.Input("y", F32, {1, 64});
    int big = -1, small = -1;
    if (big_last) {
      small = b.Mul(y, ScalarFp16Fused(b, "s", 1.5f));
      big = b.Mul(x, ScalarFp16Fused(b, "k", 1000.0f));
    } else {
      big = b.Mul(x, ScalarFp16Fused(b, "k", 1000.0f));
      small = b.Mul(y, ScalarFp16Fused(b, "s", 1.5f));
    }
    b.Output(b.Mul(b.Add(big, small), ScalarFp16Fused(b, "inv_k", 1e-3f)));
    const ir::Model m = b.Finish();
    const int overflowed =
        NonFiniteFp16Fused(Out(m, {Filled({1, 64}, 90, 110), Filled({1, 64}, 0, 1)}, Precision::kFp16Fused));
    EXPECT_EQ(overflowed, big_last ? 0 : 64) << "big computed " << (big_last ? "last" : "first");
  }
}

TEST(Fp16Fused, ABroadcastOperandIsReadFromMemory) {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 8, 256});
  int y = b.Input("y", F32, {1, 8, 256});
  int t = b.Mul(x, ScalarFp16Fused(b, "one", 1.0f));
  int mean = b.Mean(y, {-1}, true);
  int m = b.Mul(mean, ScalarFp16Fused(b, "k", 1e6f));  // linked on the MEAN: 1e6 * mean stays float here
  b.Output(b.Mul(b.Sub(m, t), ScalarFp16Fused(b, "inv_k", 1e-3f)));
  const ir::Model model = b.Finish();
  const std::vector<bool> in_float = exec::KeptInFloat(model.main());
  EXPECT_TRUE(in_float[mean]);
  EXPECT_FALSE(in_float[m]) << "[1,8,1] against [1,8,256]: not the linked operand";
  EXPECT_EQ(
      NonFiniteFp16Fused(Out(model, {Filled({1, 8, 256}, 90, 110), Filled({1, 8, 256}, 0, 1)}, Precision::kFp16Fused)),
      2048);
}

TEST(Fp16Fused, AReductionKeepsItsLinkedScaleInFloat) {
  // SUM over 256 values ~ 440 is 112640; the MUL by 1e-3 runs in the SUM's kernel.
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 8, 256});
  b.Output(b.Mul(b.Sum(x, {-1}, true), ScalarFp16Fused(b, "k", 1e-3f)));
  const ir::Model m = b.Finish();
  const npy::Array in = Filled({1, 8, 256}, 400, 480);
  EXPECT_EQ(NonFiniteFp16Fused(Out(m, {in}, Precision::kFp16Fused)), 0);
  EXPECT_EQ(NonFiniteFp16Fused(Out(m, {in}, Precision::kFp16Storage)), 8);
}

TEST(Fp16Fused, ALayerNormIsOneKernelButItsVariantsAreNot) {
  const npy::Array in = Filled({1, 8, 256}, -440, 440, 9);
  const ir::Model layernorm = synth::Build("layernorm-256");
  EXPECT_EQ(NonFiniteFp16Fused(Out(layernorm, {in}, Precision::kFp16Fused)), 0);
  const std::vector<float> fp32 = Out(layernorm, {in}, Precision::kFp32);
  const std::vector<float> fused = Out(layernorm, {in}, Precision::kFp16Fused);
  for (size_t i = 0; i < fp32.size(); ++i) ASSERT_NEAR(fused[i], fp32[i], 0.01) << i;

  // RMSNorm: the squares are written for the MEAN kernel and pass 65504.
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 8, 256});
  int ms = b.Mean(b.Mul(x, x), {-1}, true);
  b.Output(b.Mul(x, b.Rsqrt(b.Add(ms, ScalarFp16Fused(b, "eps", 1e-5f)))));
  const ir::Model rms = b.Finish();
  const std::vector<bool> in_float = exec::KeptInFloat(rms.main());
  EXPECT_FALSE(in_float[rms.main().ops[0].outputs[0]]);

  // The same statistics with SQUARED_DIFFERENCE are separate kernels too.
  GraphBuilder c;
  x = c.Input("x", F32, {1, 8, 256});
  int mean = c.Mean(x, {-1}, true);
  int var = c.Mean(c.SquaredDifference(x, mean), {-1}, true);
  c.Output(c.Mul(c.Sub(x, mean), c.Rsqrt(c.Add(var, ScalarFp16Fused(c, "eps", 1e-5f)))));
  const ir::Model sqdiff = c.Finish();
  const std::vector<float> broken = Out(sqdiff, {in}, Precision::kFp16Fused);
  EXPECT_EQ(NonFiniteFp16Fused(broken) + std::count(broken.begin(), broken.end(), 0.0f), 2048)
      << "the variance overflows: inf, or RSQRT(inf) = 0";
}

TEST(Fp16Fused, ScalarOperandsStayFloatWhileTensorsAndWeightsAreHalf) {
  // x * c - 1 at x = 1 with c = 1.0001 (1.0 in half).
  for (bool scalar : {true, false}) {
    GraphBuilder b;
    int x = b.Input("x", F32, {1, 64});
    int c = scalar ? ScalarFp16Fused(b, "c", 1.0001f) : b.ConstF32("c", {64}, std::vector<float>(64, 1.0001f));
    b.Output(b.Sub(b.Mul(x, c), ScalarFp16Fused(b, "one", 1.0f)));
    const std::vector<float> got = Out(b.Finish(), {Filled({1, 64}, 1, 1)}, Precision::kFp16Fused);
    EXPECT_EQ(got[0], scalar ? Half(1.0001f - 1.0f) : 0.0f) << (scalar ? "scalar" : "tensor");
  }
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 2, 2, 4});
  int w = b.ConstF32("w", {4, 1, 1, 4}, std::vector<float>(16, 0.250025f));
  b.Output(b.Sub(b.Conv2D(x, w, builder::kNoInput, tfl::Padding_VALID, 1, 1), ScalarFp16Fused(b, "one", 1.0f)));
  EXPECT_EQ(Out(b.Finish(), {Filled({1, 2, 2, 4}, 1, 1)}, Precision::kFp16Fused)[0], 0.0f);
}

TEST(Fp16Fused, GraphInputsAndOutputsAreHalf) {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 64});
  b.Output(b.Mul(x, ScalarFp16Fused(b, "third", 1.0f / 3.0f)));
  const ir::Model m = b.Finish();
  EXPECT_EQ(NonFiniteFp16Fused(Out(m, {Filled({1, 64}, 9e4f, 1.1e5f)}, Precision::kFp16Fused)), 64);
  const npy::Array in = Filled({1, 64}, 90, 110);
  const std::vector<float> got = Out(m, {in}, Precision::kFp16Fused);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(got[i], Half(Half(in.as<float>()[i]) * (1.0f / 3.0f))) << i;
}

}  // namespace
}  // namespace gpuclean
