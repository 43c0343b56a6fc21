// ctest-labels: litert webgpu
// fp16-fused, the numeric model of mldrift-webgpu@2.5.3, against the real
// LiteRT.js WebGPU delegate with precision fp16 (SwiftShader), on micro-probes
// at several magnitudes, all in ONE Chromium batch. Prints the table
// docs/numerics.md quotes.
//
// For every probe the model must predict what the delegate does: the same
// number of non-finite outputs (overflow predicted <=> overflow measured),
// and where finite the same numbers within two half-precision steps at the
// output's magnitude (both round the stored output to half; the GPU sums in
// another order). fp16-storage, which rounds every op output, is shown to
// predict overflow where the delegate computes correctly (LayerNorm and a
// fused x^2 at |x| ~ 256 and 440: issue 16).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>

#include "gpuclean/builder.h"
#include "gpuclean/format.h"
#include "gpuclean/lint.h"
#include "gpuclean/metrics.h"
#include "gpuclean/probe.h"
#include "gpuclean/synth.h"
#include "support/test_support.h"
#include "support/tflite_names.h"

namespace gpuclean {
namespace {

using builder::GraphBuilder;
using exec::Precision;
using ::gpuclean::testing::tflite_names::F32;

int ScalarFp16FusedVsWebgpu(GraphBuilder& b, float v) { return b.ConstF32(fmt::format("scalar_{}", v), {}, {v}); }

std::vector<float> HashValues(int64_t n, float lo, float hi, uint32_t seed) {
  const npy::Array a = synth::HashUniform({n}, lo, hi, seed);
  return std::vector<float>(a.as<float>(), a.as<float>() + n);
}

struct Probe {
  std::string name;
  float magnitude = 0;
  ir::Model model;
  std::vector<npy::Array> inputs;
  // Where issue 16 saw fp16-storage predict an overflow the delegate does
  // not have: this test requires that disagreement to show.
  bool storage_overflows_wrongly = false;
};

// --- the graphs issue 16 names, at each magnitude ---------------------------

ir::Model SquareThenScale() {  // x^2 fused into its elementwise consumer
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 256});
  b.Output(b.Mul(b.Square(x), ScalarFp16FusedVsWebgpu(b, 1e-3f)));
  return b.Finish();
}

ir::Model SquareIntoConcat() {  // x^2 written to memory for a CONCATENATION
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 256});
  b.Output(b.Mul(b.Concatenation({b.Square(x), x}, 1), ScalarFp16FusedVsWebgpu(b, 1e-3f)));
  return b.Finish();
}

ir::Model LargeMean() {  // 65536 elements per output
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 256, 256, 4});
  b.Output(b.Mean(x, {1, 2}, true));
  return b.Finish();
}

// conv 3x3 (outputs ~36 |x|, past 65504 at |x| ~ 3000) scaled by 0.01 in
// the same kernel, then a second conv.
ir::Model ConvChain() {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 8, 8, 8});
  int w1 = b.ConstF32("w1", {16, 3, 3, 8}, HashValues(16 * 9 * 8, 0.5f, 1.5f, 31));
  int w2 = b.ConstF32("w2", {8, 3, 3, 16}, HashValues(8 * 9 * 16, -0.5f, 0.5f, 32));
  int h = b.Mul(b.Conv2D(x, w1, builder::kNoInput, tfl::Padding_SAME, 1, 1), ScalarFp16FusedVsWebgpu(b, 0.01f));
  b.Output(b.Conv2D(h, w2, builder::kNoInput, tfl::Padding_SAME, 1, 1));
  return b.Finish();
}

// --- one graph per part of the rule (docs/numerics.md) ----------------------

ir::Model Chain() {  // (1000 x) * 0.001: the 1e5 between the two MULs stays float
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 64});
  b.Output(b.Mul(b.Mul(x, ScalarFp16FusedVsWebgpu(b, 1000.0f)), ScalarFp16FusedVsWebgpu(b, 1e-3f)));
  return b.Finish();
}

ir::Model Fanout() {  // t = 1000 x read by two kernels
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 64});
  int t = b.Mul(x, ScalarFp16FusedVsWebgpu(b, 1000.0f));
  b.Output(b.Mul(t, ScalarFp16FusedVsWebgpu(b, 1e-3f)));
  b.Output(b.Mul(t, ScalarFp16FusedVsWebgpu(b, 2e-3f)));
  return b.Finish();
}

// ADD(big, small) * 1e-3 with big = 1000 x: linked on the operand computed last.
ir::Model AddOfTwoComputed(bool big_last) {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 64});
  int y = b.Input("y", F32, {1, 64});
  int big = -1, small = -1;
  if (big_last) {
    small = b.Mul(y, ScalarFp16FusedVsWebgpu(b, 1.5f));
    big = b.Mul(x, ScalarFp16FusedVsWebgpu(b, 1000.0f));
  } else {
    big = b.Mul(x, ScalarFp16FusedVsWebgpu(b, 1000.0f));
    small = b.Mul(y, ScalarFp16FusedVsWebgpu(b, 1.5f));
  }
  b.Output(b.Mul(b.Add(big, small), ScalarFp16FusedVsWebgpu(b, 1e-3f)));
  return b.Finish();
}

// (t - m) * 1e-3 where the broadcast operand m = 1e6 * MEAN(y) ([1,8,1]) is
// computed last: an elementwise op is not linked on a broadcast operand.
ir::Model BroadcastOperandComputedLast() {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 8, 256});
  int y = b.Input("y", F32, {1, 8, 256});
  int t = b.Mul(x, ScalarFp16FusedVsWebgpu(b, 1.0f));
  int m = b.Mul(b.Mean(y, {-1}, true), ScalarFp16FusedVsWebgpu(b, 1e6f));
  b.Output(b.Mul(b.Sub(m, t), ScalarFp16FusedVsWebgpu(b, 1e-3f)));
  return b.Finish();
}

// LayerNorm statistics as separate kernels: SQUARED_DIFFERENCE, or RMSNorm.
ir::Model LayerNormWithSquaredDifference() {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 8, 256});
  int mean = b.Mean(x, {-1}, true);
  int var = b.Mean(b.SquaredDifference(x, mean), {-1}, true);
  b.Output(b.Mul(b.Sub(x, mean), b.Rsqrt(b.Add(var, ScalarFp16FusedVsWebgpu(b, 1e-5f)))));
  return b.Finish();
}

ir::Model RmsNorm() {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 8, 256});
  int ms = b.Mean(b.Mul(x, x), {-1}, true);
  b.Output(b.Mul(x, b.Rsqrt(b.Add(ms, ScalarFp16FusedVsWebgpu(b, 1e-5f)))));
  return b.Finish();
}

ir::Model SumThenScale() {  // the MUL is linked on the SUM: 112640 stays float
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 8, 256});
  b.Output(b.Mul(b.Sum(x, {-1}, true), ScalarFp16FusedVsWebgpu(b, 1e-3f)));
  return b.Finish();
}

ir::Model InputScaled() {  // graph inputs are uploaded as half
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 64});
  b.Output(b.Mul(x, ScalarFp16FusedVsWebgpu(b, 1e-3f)));
  return b.Finish();
}

// x * c - 1 at x = 1 with c = 1.0001: a scalar c is a float uniform, a
// [64] constant is stored in half (1.0001 -> 1).
ir::Model ConstantOperand(bool scalar) {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 64});
  int c = scalar ? ScalarFp16FusedVsWebgpu(b, 1.0001f) : b.ConstF32("c", {64}, std::vector<float>(64, 1.0001f));
  b.Output(b.Sub(b.Mul(x, c), ScalarFp16FusedVsWebgpu(b, 1.0f)));
  return b.Finish();
}

ir::Model ConvWeights() {  // 4 * 0.250025 - 1: weights in half give 0
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 2, 2, 4});
  int w = b.ConstF32("w", {4, 1, 1, 4}, std::vector<float>(16, 0.250025f));
  b.Output(b.Sub(b.Conv2D(x, w, builder::kNoInput, tfl::Padding_VALID, 1, 1), ScalarFp16FusedVsWebgpu(b, 1.0f)));
  return b.Finish();
}

ir::Model SquareIntoConv() {  // an elementwise op before a conv is stored
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 4, 4, 16});
  int w = b.ConstF32("w", {8, 1, 1, 16}, std::vector<float>(128, 1e-3f));
  b.Output(b.Conv2D(b.Square(x), w, builder::kNoInput, tfl::Padding_VALID, 1, 1));
  return b.Finish();
}

// The matrix's measured POW and SELECT_V2 verdicts beyond the synth probes:
// a runtime exponent, a scalar fill.
ir::Model PowRuntimeExponent() {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 64});
  int y = b.Input("y", F32, {1, 64});
  b.Output(b.Pow(x, y));
  return b.Finish();
}

ir::Model SelectV2ScalarFill() {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 64});
  b.Output(b.SelectV2(b.Greater(x, ScalarFp16FusedVsWebgpu(b, 0.5f)), x, ScalarFp16FusedVsWebgpu(b, -1.0f)));
  return b.Finish();
}

npy::Array Uniform(std::vector<int64_t> shape, float lo, float hi, uint32_t seed) {
  return synth::HashUniform(std::move(shape), lo, hi, seed);
}

// |x| uniform in [0.9 m, 1.1 m), each sign with probability 1/2 (`signed`)
// or positive.
npy::Array AroundMagnitude(std::vector<int64_t> shape, float m, uint32_t seed, bool with_sign) {
  npy::Array a = Uniform(shape, 0.9f * m, 1.1f * m, seed);
  const npy::Array sign = Uniform(shape, -1, 1, seed + 1000);
  if (with_sign)
    for (int64_t i = 0; i < a.num_elements(); ++i) a.as<float>()[i] *= sign.as<float>()[i] < 0 ? -1.0f : 1.0f;
  return a;
}

std::vector<Probe> Probes() {
  std::vector<Probe> probes;
  for (float m : {10.0f, 256.0f, 440.0f, 3000.0f}) {
    const bool issue_magnitude = m == 256.0f || m == 440.0f;
    probes.push_back({"layernorm-256ch",
                      m,
                      synth::Build("layernorm-256"),
                      {AroundMagnitude({1, 8, 256}, m, 9, true)},
                      issue_magnitude});
    probes.push_back(
        {"square-then-scale", m, SquareThenScale(), {AroundMagnitude({1, 256}, m, 3, true)}, issue_magnitude});
    probes.push_back({"square-into-concat", m, SquareIntoConcat(), {AroundMagnitude({1, 256}, m, 3, true)}});
    probes.push_back({"mean-65536", m, LargeMean(), {AroundMagnitude({1, 256, 256, 4}, m, 7, false)}});
    probes.push_back({"conv-chain", m, ConvChain(), {AroundMagnitude({1, 8, 8, 8}, m, 4, false)}});
  }
  const auto around = [](float v) { return Uniform({1, 64}, 0.9f * v, 1.1f * v, 2); };
  probes.push_back({"chain", 100, Chain(), {around(100)}});
  probes.push_back({"fanout", 100, Fanout(), {around(100)}});
  probes.push_back({"add-big-computed-last", 100, AddOfTwoComputed(true), {around(100), Uniform({1, 64}, 0, 1, 5)}});
  probes.push_back({"add-big-computed-first", 100, AddOfTwoComputed(false), {around(100), Uniform({1, 64}, 0, 1, 5)}});
  probes.push_back({"broadcast-operand-last",
                    100,
                    BroadcastOperandComputedLast(),
                    {Uniform({1, 8, 256}, 90, 110, 22), Uniform({1, 8, 256}, 0, 1, 23)}});
  probes.push_back(
      {"layernorm-squared-difference", 440, LayerNormWithSquaredDifference(), {Uniform({1, 8, 256}, -440, 440, 9)}});
  probes.push_back({"rmsnorm", 440, RmsNorm(), {Uniform({1, 8, 256}, -440, 440, 9)}});
  probes.push_back({"sum-then-scale", 440, SumThenScale(), {Uniform({1, 8, 256}, 400, 480, 6)}});
  probes.push_back({"input-1e5", 1e5f, InputScaled(), {around(1e5f)}});
  probes.push_back({"scalar-operand", 1, ConstantOperand(true), {Uniform({1, 64}, 1, 1, 8)}});
  probes.push_back({"tensor-operand", 1, ConstantOperand(false), {Uniform({1, 64}, 1, 1, 8)}});
  probes.push_back({"conv-weights", 1, ConvWeights(), {Uniform({1, 2, 2, 4}, 1, 1, 8)}});
  probes.push_back({"square-into-conv", 350, SquareIntoConv(), {Uniform({1, 4, 4, 16}, 300, 400, 21)}});
  probes.push_back(
      {"pow-runtime-exponent", 2, PowRuntimeExponent(), {Uniform({1, 64}, 0.5f, 2, 11), Uniform({1, 64}, 0, 3, 12)}});
  probes.push_back({"select-v2-scalar-fill", 1, SelectV2ScalarFill(), {Uniform({1, 64}, 0, 1, 13)}});
  return probes;
}

// Outputs of one of our modes, and whether any tensor on the way went
// non-finite: an overflow can end as zeros (RSQRT(inf) = 0) on our side and
// as NaN on the GPU, so the prediction is "an overflow happened".
struct OurRun {
  std::vector<npy::Array> outputs;
  bool overflowed = false;
};

OurRun RunMode(const ir::Model& model, const std::vector<npy::Array>& inputs, Precision precision) {
  exec::Interpreter interpreter(std::make_shared<const ir::Model>(model), {.precision = precision});
  for (size_t i = 0; i < inputs.size(); ++i) interpreter.SetInput(static_cast<int>(i), inputs[i]);
  OurRun run;
  interpreter.Invoke([&](int, int, const exec::Tensor& t) {
    if (t.dtype != F32) return;
    for (int64_t k = 0; k < t.num_elements() && !run.overflowed; ++k) run.overflowed = !std::isfinite(t.as<float>()[k]);
  });
  for (int o = 0; o < interpreter.num_outputs(); ++o) run.outputs.push_back(interpreter.Output(o));
  return run;
}

int64_t NonFiniteFp16FusedVsWebgpu(const npy::Array& a) {
  int64_t n = 0;
  for (int64_t i = 0; i < a.num_elements(); ++i) n += !std::isfinite(a.as<float>()[i]);
  return n;
}

// Two steps of binary16 at magnitude v (subnormal spacing below 2^-14).
double TwoHalfSteps(double v) {
  const int exponent = std::max(-14, static_cast<int>(std::floor(std::log2(std::max(v, 1e-30)))));
  return 2 * std::ldexp(1.0, exponent - 10);
}

TEST(Fp16FusedVsWebGpu, PredictsTheDelegatesOverflowAndNumbersAtEveryMagnitude) {
  ASSERT_EQ(lint::NumericModel(lint::LoadMatrix(testing::SourceDir() + "/data/compat", "mldrift-webgpu@2.5.3")),
            Precision::kFp16Fused);
  testing::TempDir dir;
  const std::vector<Probe> probes = Probes();
  std::vector<probe::ProbeRequest> requests;
  for (size_t i = 0; i < probes.size(); ++i) {
    probe::ProbeRequest r;
    r.model_path = dir.file(std::to_string(i) + ".tflite");
    format::WriteModel(probes[i].model, r.model_path);
    for (size_t k = 0; k < probes[i].inputs.size(); ++k) {
      const std::string file = dir.file(std::to_string(i) + ".in" + std::to_string(k) + ".npy");
      npy::Write(file, probes[i].inputs[k]);
      r.inputs.push_back({std::to_string(k), file});
    }
    r.runtime = probe::Runtime::kLiteRtWebGpu;
    r.precision = "fp16";
    r.out_dir = dir.file(std::to_string(i));
    requests.push_back(r);
  }
  const std::vector<probe::ProbeResult> results = probe::RunProbes(requests);
  ASSERT_EQ(results.size(), probes.size());

  std::printf("%-30s %7s | %-26s | %-26s | %-18s\n", "probe", "|x|", "WebGPU fp16 vs fp32", "fp16-fused vs WebGPU",
              "fp16-storage");
  int storage_disagreements = 0;
  for (size_t i = 0; i < probes.size(); ++i) {
    const Probe& p = probes[i];
    SCOPED_TRACE(p.name + " at |x| ~ " + std::to_string(p.magnitude));
    ASSERT_TRUE(results[i].ok) << results[i].error;
    ASSERT_TRUE(results[i].residency.fully_delegated.value_or(false)) << probe::Summarize(results[i].residency);
    const OurRun fp32 = RunMode(p.model, p.inputs, Precision::kFp32);
    const OurRun fused = RunMode(p.model, p.inputs, Precision::kFp16Fused);
    const OurRun storage = RunMode(p.model, p.inputs, Precision::kFp16Storage);
    ASSERT_FALSE(fp32.overflowed);
    ASSERT_EQ(results[i].outputs.size(), fp32.outputs.size());
    bool gpu_overflowed = false;
    for (size_t o = 0; o < fp32.outputs.size(); ++o) {
      const npy::Array& gpu = results[i].outputs[o];
      const analyze::Metrics measured = analyze::Compare(fp32.outputs[o], gpu);
      const analyze::Metrics predicted = analyze::Compare(gpu, fused.outputs[o]);
      gpu_overflowed |= NonFiniteFp16FusedVsWebgpu(gpu) > 0;
      std::printf("%-30s %7g | inf %4lld  max|d| %-10.4g | inf %4lld  max|d| %-10.4g | %s\n", p.name.c_str(),
                  p.magnitude, static_cast<long long>(NonFiniteFp16FusedVsWebgpu(gpu)), measured.max_abs_diff,
                  static_cast<long long>(NonFiniteFp16FusedVsWebgpu(fused.outputs[o])), predicted.max_abs_diff,
                  storage.overflowed ? "overflows" : "finite");
      if (NonFiniteFp16FusedVsWebgpu(gpu) == 0 && !fused.overflowed) {
        if (!std::isnan(predicted.correlation) && predicted.count > 8)
          EXPECT_GE(predicted.correlation, 0.9999) << "output " << o;
        EXPECT_LE(predicted.max_abs_diff, TwoHalfSteps(measured.max_abs_ref)) << "output " << o;
      } else if (NonFiniteFp16FusedVsWebgpu(fused.outputs[o]) > 0) {
        // Partial overflow (x^2 past 65504 for some elements only): the same elements.
        EXPECT_EQ(NonFiniteFp16FusedVsWebgpu(fused.outputs[o]), NonFiniteFp16FusedVsWebgpu(gpu)) << "output " << o;
      }
    }
    EXPECT_EQ(fused.overflowed, gpu_overflowed) << "overflow predicted vs measured";
    if (p.storage_overflows_wrongly) {
      EXPECT_FALSE(gpu_overflowed);
      EXPECT_TRUE(storage.overflowed) << "fp16-storage was expected to predict an overflow here";
      ++storage_disagreements;
    }
  }
  EXPECT_EQ(storage_disagreements, 4);
}

}  // namespace
}  // namespace gpuclean
