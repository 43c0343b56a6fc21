// ctest-labels: litert webgpu
// `convert --target`: the lowering is linted for a GPU target, the proven
// rewrites lint suggests are applied, and the result is re-linted; with
// --probe the written model runs on LiteRT.js's real WebGPU delegate.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "gpuclean/convert.h"
#include "gpuclean/format.h"
#include "gpuclean/lint.h"
#include "onnx/onnx_test_model.h"
#include "support/test_support.h"

namespace gpuclean {
namespace {

namespace fs = std::filesystem;
using testing::OnnxTestModel;
using testing::RandomValues;

int CountConvertTarget(const convert::Report& r, const std::string& op) {
  auto it = r.ops_out.find(op);
  return it == r.ops_out.end() ? 0 : it->second;
}

int LintErrors(const std::string& tflite, const std::string& target) {
  const lint::Matrix matrix = lint::LoadMatrix(testing::SourceDir() + "/data/compat", target);
  return lint::Lint(format::ReadModel(tflite), matrix).count(lint::Severity::kError);
}

// `gpuclean convert ONNX -o OUT --target TARGET --probe --json`: the report,
// or an empty object (and a failure) when it did not exit 0.
nlohmann::json ConvertAndProbe(const std::string& onnx, const std::string& out, const std::string& target) {
  const auto r = testing::RunGpuclean("convert " + testing::ShellQuote(onnx) + " -o " + testing::ShellQuote(out) +
                                      " --target " + target + " --probe --json -q");
  if (r.exit_code != 0) {
    ADD_FAILURE() << "exit " << r.exit_code << ": " << r.out << r.err;
    return nlohmann::json::object();
  }
  return nlohmann::json::parse(r.out);
}

// `m` written as NAME.onnx in `dir` and converted for `target` to NAME.tflite.
convert::Result ConvertForTarget(const OnnxTestModel& m, testing::TempDir& dir, const std::string& name,
                                 const std::string& target) {
  convert::Options o;
  o.onnx_path = m.Write(dir.file(name + ".onnx"));
  o.output_path = dir.file(name + ".tflite");
  o.target = target;
  return convert::Convert(o);
}

// The probe ran, every op on the WebGPU delegate in one partition, and every
// output within correlation 0.999 of onnxruntime.
void ExpectWhollyOnWebGpu(const nlohmann::json& report) {
  const nlohmann::json& w = report["webgpu"];
  ASSERT_TRUE(w["ran"].get<bool>()) << w.dump(2);
  EXPECT_TRUE(w["fully_delegated"].get<bool>()) << w.dump(2);
  for (const auto& o : w["fp16_vs_onnxruntime"]) EXPECT_GE(o["correlation"].get<double>(), 0.999) << o.dump();
}

// A ResNet stem: the padded max-pool lowers to PADV2 with -inf, which the
// OpenCL delegate rejects; padv2-to-pad0 turns it into a zero PAD after the ReLU.
OnnxTestModel Stem() {
  OnnxTestModel m;
  m.Input("image", {1, 3, 16, 16});
  m.InitF32("w", {8, 3, 3, 3}, RandomValues(8 * 27, 11, 0.5f));
  m.Node("Conv", {"image", "w"}, {"c"}).Ints("pads", {1, 1, 1, 1});
  m.Node("Relu", {"c"}, {"r"});
  m.Node("MaxPool", {"r"}, {"p"}).Ints("kernel_shape", {3, 3}).Ints("strides", {2, 2}).Ints("pads", {1, 1, 1, 1});
  m.Output("p");
  return m;
}

TEST(ConvertTarget, AppliesAndProvesTheRewritesLintSuggests) {
  testing::TempDir dir;
  convert::Options o;
  o.onnx_path = Stem().Write(dir.file("stem.onnx"));
  o.output_path = dir.file("stem.tflite");
  o.target = "mldrift-cl@2.1.6";
  const convert::Result r = convert::Convert(o);
  const std::string text = r.report.RenderText();
  ASSERT_TRUE(r.report.proven) << text;
  EXPECT_TRUE(r.report.written) << text;
  EXPECT_EQ(r.exit_code(), 0) << text;
  EXPECT_EQ(r.report.target.target, "mldrift-cl@2.1.6");
  EXPECT_GE(r.report.target.errors_before, 1) << text;
  EXPECT_EQ(r.report.target.errors_after, 0) << text;
  ASSERT_FALSE(r.report.target.passes.empty()) << text;
  EXPECT_NE(r.report.target.passes[0].find("padv2-to-pad0"), std::string::npos) << text;
  EXPECT_EQ(CountConvertTarget(r.report, "PADV2"), 0) << text;
  EXPECT_NE(text.find("after:  predicted: 5 of 5 nodes on GPU"), std::string::npos) << text;
  EXPECT_EQ(LintErrors(o.output_path, o.target), 0);
}

// A top-K over scores closer together than half precision resolves
// (1000 + x/1000: fp16's spacing at 1000 is 0.5) orders its rows by index
// in fp16 and by value in fp32. The selected set is the same, so convert's
// check in the target's arithmetic pairs the gathered rows by the indices
// each run selected: position by position the rows would be a permutation.
TEST(ConvertTarget, Fp16CheckPairsRowsByTheTopKSelection) {
  testing::TempDir dir;
  OnnxTestModel m;
  m.Input("feats", {1, 16, 8});
  m.InitI64("first", {1}, {0});
  m.Node("Gather", {"feats", "first"}, {"x0"}).Int("axis", 2);  // [1,16,1]
  m.InitI64("axis2", {1}, {2});
  m.Node("Squeeze", {"x0", "axis2"}, {"x0s"});
  m.InitF32("milli", {}, {1e-3f});
  m.InitF32("thousand", {}, {1000.0f});
  m.Node("Mul", {"x0s", "milli"}, {"small"});
  m.Node("Add", {"small", "thousand"}, {"scores"});
  m.InitI64("k", {1}, {16});
  m.Node("TopK", {"scores", "k"}, {"top", "index"});
  m.InitI64("axis0", {1}, {0});
  m.Node("Squeeze", {"index", "axis0"}, {"rows"});
  m.Node("Gather", {"feats", "rows"}, {"queries"}).Int("axis", 1);
  m.Output("queries");
  convert::Options o;
  o.onnx_path = m.Write(dir.file("ties.onnx"));
  o.target = "mldrift-webgpu@2.5.3";
  const convert::Result r = convert::Convert(o);
  const std::string text = r.report.RenderText();
  ASSERT_TRUE(r.report.proven) << text;
  ASSERT_FALSE(r.report.target.numeric_model.empty()) << text;
  EXPECT_GE(r.report.target.fp16_correlation, 0.999) << text;
  EXPECT_FALSE(r.report.target.fp16_correlation_before.has_value()) << "no norm rebuild for a ranking: " << text;
}

// One file for Android's OpenCL delegate and the web's WebGPU one: WebGPU
// takes the stem's -inf PADV2, OpenCL splits on it. --target A,B applies
// each target's rewrites and reports both; the file is clean for both.
TEST(ConvertTarget, SeveralTargetsMakeOneFileCleanForEach) {
  testing::TempDir dir;
  convert::Options o;
  o.onnx_path = Stem().Write(dir.file("stem.onnx"));
  o.output_path = dir.file("stem_webgpu.tflite");
  o.target = "mldrift-webgpu@2.5.3";
  ASSERT_TRUE(convert::Convert(o).report.written);
  EXPECT_EQ(LintErrors(o.output_path, "mldrift-webgpu@2.5.3"), 0);
  EXPECT_GT(LintErrors(o.output_path, "mldrift-cl@2.1.6"), 0) << "the WebGPU choice alone keeps the PADV2";

  o.output_path = dir.file("stem_both.tflite");
  o.target = "mldrift-webgpu@2.5.3,mldrift-cl@2.1.6";
  const convert::Result r = convert::Convert(o);
  const std::string text = r.report.RenderText();
  ASSERT_TRUE(r.report.written) << text;
  EXPECT_EQ(r.exit_code(), 0) << text;
  EXPECT_EQ(r.report.target.errors_after, 0) << text;
  ASSERT_EQ(r.report.target.per_target.size(), 2u) << text;
  EXPECT_NE(r.report.target.per_target[1].find("mldrift-cl@2.1.6: 1 error(s) -> 0"), std::string::npos) << text;
  EXPECT_EQ(LintErrors(o.output_path, "mldrift-webgpu@2.5.3"), 0);
  EXPECT_EQ(LintErrors(o.output_path, "mldrift-cl@2.1.6"), 0);
}

TEST(ConvertTarget, NoneKeepsThePlainLowering) {
  testing::TempDir dir;
  convert::Options o;
  o.onnx_path = Stem().Write(dir.file("stem.onnx"));
  o.output_path = dir.file("stem.tflite");
  o.target = "none";
  const convert::Result r = convert::Convert(o);
  ASSERT_TRUE(r.report.proven) << r.report.RenderText();
  EXPECT_EQ(r.exit_code(), 0);
  EXPECT_TRUE(r.report.target.target.empty());
  EXPECT_EQ(CountConvertTarget(r.report, "PADV2"), 1) << r.report.RenderText();
  EXPECT_GE(LintErrors(o.output_path, "mldrift-cl@2.1.6"), 1);
}

// TopK has no form on the OpenCL delegate: lint errors remain, so nothing is written and the
// exit code says the model is not GPU-clean; --allow-remaining writes the
// proven model and still exits 1.
TEST(ConvertTarget, ErrorsLeftWriteNothingUnlessAllowed) {
  testing::TempDir dir;
  OnnxTestModel m;
  m.Input("scores", {1, 32});
  m.InitI64("k", {1}, {4});
  m.Node("TopK", {"scores", "k"}, {"values", "indices"});
  m.Output("values");
  convert::Options o;
  o.onnx_path = m.Write(dir.file("topk.onnx"));
  o.output_path = dir.file("topk.tflite");
  o.target = "mldrift-cl@2.1.6";
  const convert::Result r = convert::Convert(o);
  const std::string text = r.report.RenderText();
  ASSERT_TRUE(r.report.proven) << text;
  EXPECT_FALSE(r.report.written) << text;
  EXPECT_FALSE(fs::exists(o.output_path));
  EXPECT_EQ(r.exit_code(), 1);
  EXPECT_FALSE(r.report.target.clean);
  ASSERT_FALSE(r.report.target.remaining.empty()) << text;
  EXPECT_NE(r.report.target.remaining[0].find("TOPK_V2"), std::string::npos) << text;
  EXPECT_NE(text.find("not GPU-clean for mldrift-cl@2.1.6"), std::string::npos) << text;

  o.allow_remaining = true;
  const convert::Result allowed = convert::Convert(o);
  EXPECT_TRUE(allowed.report.written);
  EXPECT_TRUE(fs::exists(o.output_path));
  EXPECT_EQ(allowed.exit_code(), 1);
}

TEST(ConvertTarget, UnknownTargetIsOneLineExitTwo) {
  testing::TempDir dir;
  const std::string onnx = Stem().Write(dir.file("stem.onnx"));
  const auto r = testing::RunGpuclean("convert " + testing::ShellQuote(onnx) + " -q --target no-such-gpu");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("no-such-gpu"), std::string::npos) << r.err;
  // In a list of targets too, before any conversion work.
  const auto list =
      testing::RunGpuclean("convert " + testing::ShellQuote(onnx) + " -q --target mldrift-webgpu@2.5.3,no-such-gpu");
  EXPECT_EQ(list.exit_code, 2) << list.err;
  EXPECT_EQ(std::count(list.err.begin(), list.err.end(), '\n'), 1) << list.err;
  EXPECT_NE(list.err.find("no-such-gpu"), std::string::npos) << list.err;
}

// The windowed blocks below share their geometry: an 8x8x32 map in 4x4 windows.
constexpr int64_t kBlockH = 8, kBlockW = 8, kBlockC = 32, kBlockWin = 4;

void I64(OnnxTestModel& m, const std::string& name, const std::vector<int64_t>& v) {
  m.InitI64(name, {static_cast<int64_t>(v.size())}, v);
}

// window_partition as Swin and Hiera write it: view [1, H/w, w, W/w, w, C],
// permute(0, 1, 3, 2, 4, 5), then view as `shape`.
void WindowPartition(OnnxTestModel& m, const std::string& x, const std::vector<int64_t>& shape,
                     const std::string& out) {
  I64(m, out + "_s6", {1, kBlockH / kBlockWin, kBlockWin, kBlockW / kBlockWin, kBlockWin, kBlockC});
  m.Node("Reshape", {x, out + "_s6"}, {out + "_6d"});
  m.Node("Transpose", {out + "_6d"}, {out + "_6dt"}).Ints("perm", {0, 1, 3, 2, 4, 5});
  I64(m, out + "_shape", shape);
  m.Node("Reshape", {out + "_6dt", out + "_shape"}, {out});
}

// window_unpartition: view [1, H/w, W/w, w, w, C], permute back, view [1, H, W, C].
void WindowMerge(OnnxTestModel& m, const std::string& x, const std::string& out) {
  I64(m, out + "_s6", {1, kBlockH / kBlockWin, kBlockW / kBlockWin, kBlockWin, kBlockWin, kBlockC});
  m.Node("Reshape", {x, out + "_s6"}, {out + "_6d"});
  m.Node("Transpose", {out + "_6d"}, {out + "_6dt"}).Ints("perm", {0, 1, 3, 2, 4, 5});
  I64(m, out + "_shape", {1, kBlockH, kBlockW, kBlockC});
  m.Node("Reshape", {out + "_6dt", out + "_shape"}, {out});
}

// A Hiera / Swin style windowed attention block as exporters write it: a 6-D
// window partition, a fused QKV projection split through a 5-D reshape and
// a gather on the 3, an Erf GELU MLP, and the 6-D window merge. The plain
// lowering has rank-5/6 tensors the delegate rejects; for the WebGPU target
// it is rewritten to <= 4-D, proven against onnxruntime, and measured on the
// real WebGPU delegate in fp16: every op on the GPU, outputs close to fp32.
OnnxTestModel WindowedBlock() {
  constexpr int64_t kC = kBlockC, kHeads = 4, kD = kC / kHeads, kN = kBlockWin * kBlockWin;
  constexpr int64_t kWindows = (kBlockH / kBlockWin) * (kBlockW / kBlockWin);
  OnnxTestModel m;
  m.Input("x", {1, kBlockH, kBlockW, kC});
  auto i64 = [&](const std::string& name, std::vector<int64_t> v) { I64(m, name, v); };
  WindowPartition(m, "x", {kWindows, kN, kC}, "tokens");
  m.InitF32("w_qkv", {kC, 3 * kC}, RandomValues(kC * 3 * kC, 21, 0.2f));
  m.InitF32("b_qkv", {3 * kC}, RandomValues(3 * kC, 22, 0.1f));
  m.Node("MatMul", {"tokens", "w_qkv"}, {"qkv0"});
  m.Node("Add", {"qkv0", "b_qkv"}, {"qkv1"});
  i64("s5", {kWindows, kN, 3, kHeads, kD});
  m.Node("Reshape", {"qkv1", "s5"}, {"qkv5"});
  m.Node("Transpose", {"qkv5"}, {"qkvp"}).Ints("perm", {2, 0, 3, 1, 4});
  for (int i = 0; i < 3; ++i) {
    m.InitI64("idx" + std::to_string(i), {}, {i});
    m.Node("Gather", {"qkvp", "idx" + std::to_string(i)}, {std::string(1, "qkv"[i])}).Int("axis", 0);
  }
  m.InitF32("scale", {}, {1.0f / std::sqrt(static_cast<float>(kD))});
  m.Node("Mul", {"q", "scale"}, {"qs"});
  m.Node("Transpose", {"k"}, {"kt"}).Ints("perm", {0, 1, 3, 2});
  m.Node("MatMul", {"qs", "kt"}, {"att"});
  m.Node("Softmax", {"att"}, {"p"}).Int("axis", -1);
  m.Node("MatMul", {"p", "v"}, {"ctx"});
  m.Node("Transpose", {"ctx"}, {"ctx_t"}).Ints("perm", {0, 2, 1, 3});
  i64("s_merge", {kWindows, kN, kC});
  m.Node("Reshape", {"ctx_t", "s_merge"}, {"merged"});
  m.InitF32("w_o", {kC, kC}, RandomValues(kC * kC, 23, 0.2f));
  m.Node("MatMul", {"merged", "w_o"}, {"attn_out"});
  // Erf GELU MLP on the tokens.
  m.InitF32("w1", {kC, 2 * kC}, RandomValues(kC * 2 * kC, 24, 0.2f));
  m.Node("MatMul", {"attn_out", "w1"}, {"h"});
  m.InitF32("inv_sqrt2", {}, {0.70710678f});
  m.InitF32("one", {}, {1.0f});
  m.InitF32("half", {}, {0.5f});
  m.Node("Mul", {"h", "inv_sqrt2"}, {"hs"});
  m.Node("Erf", {"hs"}, {"he"});
  m.Node("Add", {"he", "one"}, {"he1"});
  m.Node("Mul", {"h", "he1"}, {"hg"});
  m.Node("Mul", {"hg", "half"}, {"gelu"});
  m.InitF32("w2", {2 * kC, kC}, RandomValues(2 * kC * kC, 25, 0.2f));
  m.Node("MatMul", {"gelu", "w2"}, {"mlp"});
  WindowMerge(m, "mlp", "y");
  m.Output("y");
  return m;
}

TEST(ConvertTarget, WindowedBlockIsGpuCleanAndMeasuredOnWebGpu) {
  testing::TempDir dir;
  const std::string onnx = WindowedBlock().Write(dir.file("window_block.onnx"));
  const std::string out = dir.file("window_block.tflite");

  convert::Options plain;
  plain.onnx_path = onnx;
  plain.target = "none";
  const convert::Result lowered = convert::Convert(plain);
  ASSERT_TRUE(lowered.report.proven) << lowered.report.RenderText();
  const lint::Matrix webgpu = lint::LoadMatrix(testing::SourceDir() + "/data/compat", "mldrift-webgpu@2.5.3");
  EXPECT_GT(lint::Lint(lowered.model, webgpu).count(lint::Severity::kError), 0)
      << "the plain lowering has rank-5/6 tensors";

  const nlohmann::json j = ConvertAndProbe(onnx, out, "mldrift-webgpu@2.5.3");
  ASSERT_FALSE(j.empty());
  EXPECT_TRUE(j["proven"].get<bool>());
  EXPECT_EQ(j["target"]["errors_after"], 0) << j["target"].dump(2);
  EXPECT_TRUE(j["target"]["clean"].get<bool>());
  ExpectWhollyOnWebGpu(j);
  EXPECT_EQ(LintErrors(out, "mldrift-webgpu@2.5.3"), 0);
  EXPECT_EQ(LintErrors(out, "mldrift-cl@2.1.6"), 0);
}

// The same window attention written the way SAM 2's Hiera code writes it:
// `qkv(x).reshape(B, H*W, 3, heads, -1)` then `torch.unbind(qkv, 2)`, which
// the exporter emits as a Split on axis 2 of the 5-D tensor and a Squeeze of
// each part (not a Gather), then `F.scaled_dot_product_attention` on
// `q.transpose(1, 2)`. Every op of it must end up on the WebGPU delegate.
OnnxTestModel UnbindWindowedBlock() {
  constexpr int64_t kC = kBlockC, kHeads = 2, kD = kC / kHeads, kN = kBlockWin * kBlockWin;
  constexpr int64_t kWindows = (kBlockH / kBlockWin) * (kBlockW / kBlockWin);
  OnnxTestModel m;
  m.Input("x", {1, kBlockH, kBlockW, kC});
  auto i64 = [&](const std::string& name, std::vector<int64_t> v) { I64(m, name, v); };
  WindowPartition(m, "x", {-1, kBlockWin, kBlockWin, kC}, "windows");  // view(-1, ws, ws, C)
  m.InitF32("w_qkv", {kC, 3 * kC}, RandomValues(kC * 3 * kC, 41, 0.2f));
  m.InitF32("b_qkv", {3 * kC}, RandomValues(3 * kC, 42, 0.1f));
  m.Node("MatMul", {"windows", "w_qkv"}, {"qkv0"});
  m.Node("Add", {"qkv0", "b_qkv"}, {"qkv1"});
  i64("s5", {kWindows, kN, 3, kHeads, -1});
  m.Node("Reshape", {"qkv1", "s5"}, {"qkv5"});
  i64("ones3", {1, 1, 1});
  m.Node("Split", {"qkv5", "ones3"}, {"q5", "k5", "v5"}).Int("axis", 2);
  i64("axis2", {2});
  for (const char* t : {"q", "k", "v"}) {
    m.Node("Squeeze", {std::string(t) + "5", "axis2"}, {std::string(t) + "u"});
    m.Node("Transpose", {std::string(t) + "u"}, {std::string(t) + "h"}).Ints("perm", {0, 2, 1, 3});
  }
  m.InitF32("scale", {}, {1.0f / std::sqrt(static_cast<float>(kD))});
  m.Node("Mul", {"qh", "scale"}, {"qs"});
  m.Node("Transpose", {"kh"}, {"kt"}).Ints("perm", {0, 1, 3, 2});
  m.Node("MatMul", {"qs", "kt"}, {"att"});
  m.Node("Softmax", {"att"}, {"p"}).Int("axis", -1);
  m.Node("MatMul", {"p", "vh"}, {"ctx"});
  m.Node("Transpose", {"ctx"}, {"ctx_t"}).Ints("perm", {0, 2, 1, 3});
  m.Node("Reshape", {"ctx_t", "windows_shape"}, {"ctx_w"});
  m.InitF32("w_o", {kC, kC}, RandomValues(kC * kC, 43, 0.2f));
  m.Node("MatMul", {"ctx_w", "w_o"}, {"proj"});
  WindowMerge(m, "proj", "y");
  m.Output("y");
  return m;
}

TEST(ConvertTarget, UnbindWindowAttentionIsGpuCleanAndMeasuredOnWebGpu) {
  testing::TempDir dir;
  const std::string onnx = UnbindWindowedBlock().Write(dir.file("unbind_block.onnx"));
  const std::string out = dir.file("unbind_block.tflite");
  const nlohmann::json j = ConvertAndProbe(onnx, out, "mldrift-webgpu@2.5.3");
  ASSERT_FALSE(j.empty());
  EXPECT_TRUE(j["proven"].get<bool>());
  EXPECT_EQ(j["target"]["errors_after"], 0) << j["target"].dump(2);
  ExpectWhollyOnWebGpu(j);
  EXPECT_EQ(LintErrors(out, "mldrift-webgpu@2.5.3"), 0);
  // SPLIT_V stays: measured delegated on WebGPU (the rule-edge batch) and
  // computed right there (the probe above); mldrift-cl@2.1.6's field reports
  // reject it, so a file for both names both targets.
  for (const ir::Tensor& t : format::ReadModel(out).main().tensors) EXPECT_LE(t.rank(), 4) << t.name;
}

// A pre-LN block whose residual stream sits at |x| ~ 400 (per-channel
// offsets of +-400, as in the field reports' LayerNorm overflow): the
// LayerNorm squares deviations of ~400, past half precision's 65504. The
// plain lowering is lint-clean yet breaks in mldrift-cl's fp16-compute
// arithmetic (the Pixel 8a field report); convert sees that on our
// interpreter and rebuilds the norm in its scale-first form. (WebGPU's
// fused LayerNorm holds even at +-3000, measured: its target keeps the plain
// norm.) The rewritten file agrees with onnxruntime on the real WebGPU
// delegate too.
OnnxTestModel PreLnBlock() {
  constexpr int64_t kTokens = 16, kC = 64;
  OnnxTestModel m;
  m.Input("x", {1, kTokens, kC});
  std::vector<float> offsets(kC);
  for (int64_t c = 0; c < kC; ++c) offsets[c] = (c % 2 ? 400.0f : -400.0f) + 0.5f * static_cast<float>(c % 7);
  m.InitF32("offsets", {kC}, offsets);
  m.Node("Add", {"x", "offsets"}, {"residual"});
  m.InitF32("gamma", {kC}, RandomValues(kC, 31, 1.0f));
  m.InitF32("beta", {kC}, RandomValues(kC, 32, 0.1f));
  m.Node("LayerNormalization", {"residual", "gamma", "beta"}, {"normed"}).Int("axis", -1).Float("epsilon", 1e-5f);
  m.InitF32("w", {kC, kC}, RandomValues(kC * kC, 33, 0.2f));
  m.Node("MatMul", {"normed", "w"}, {"y"});
  m.Output("y");
  return m;
}

TEST(ConvertTarget, Fp16OverflowingLayerNormIsRebuiltScaleFirst) {
  testing::TempDir dir;
  const std::string onnx = PreLnBlock().Write(dir.file("preln.onnx"));
  const std::string out = dir.file("preln.tflite");
  const nlohmann::json j = ConvertAndProbe(onnx, out, "mldrift-cl@2.1.6");
  ASSERT_FALSE(j.empty());
  const nlohmann::json& t = j["target"];
  EXPECT_EQ(t["numeric_model"], "fp16-compute");
  // The squared deviations (~160000) are past half's range in the fp32 run
  // already: the scale-first norm is tried first, and kept without running
  // the plain norm in fp16 (it stays finite there).
  EXPECT_TRUE(t["fp16_correlation_before_norm_rewrites"].is_null()) << t.dump(2);
  ASSERT_FALSE(t["fp32_largest_before_norm_rewrites"].is_null()) << t.dump(2);
  EXPECT_GT(t["fp32_largest_before_norm_rewrites"]["value"].get<double>(), 65504) << t.dump(2);
  EXPECT_GE(t["fp16_correlation"].get<double>(), 0.999) << t.dump(2);
  bool safe = false;
  for (const auto& p : t["passes"]) safe = safe || p.get<std::string>().find("safe-layernorm-v2") != std::string::npos;
  EXPECT_TRUE(safe) << t.dump(2);
  ExpectWhollyOnWebGpu(j);
}

// Values past half's range that the target's arithmetic turns into a
// harmless -inf (a large negative offset a ReLU then clears): nothing for
// the fp16-safe rewrites to rebuild, so the plain model's fp16 run decides,
// and it holds.
TEST(ConvertTarget, Fp16OverflowWithNothingToRebuildRunsThePlainModel) {
  constexpr int64_t kC = 32;
  OnnxTestModel m;
  m.Input("x", {1, 8, kC});
  std::vector<float> offsets(kC);
  for (int64_t c = 0; c < kC; ++c) offsets[c] = c % 4 == 0 ? -1e6f : 0.0f;
  m.InitF32("offsets", {kC}, offsets);
  m.Node("Add", {"x", "offsets"}, {"shifted"});
  m.Node("Relu", {"shifted"}, {"kept"});
  m.InitF32("w", {kC, kC}, RandomValues(kC * kC, 35, 0.2f));
  m.Node("MatMul", {"kept", "w"}, {"y"});
  m.Output("y");
  testing::TempDir dir;
  const convert::Result r = ConvertForTarget(m, dir, "masked", "mldrift-cl@2.1.6");
  const std::string text = r.report.RenderText();
  EXPECT_EQ(r.report.target.numeric_model, "fp16-compute") << text;
  EXPECT_FALSE(r.report.target.fp32_largest_before.has_value()) << text;
  EXPECT_FALSE(r.report.target.fp16_correlation_before.has_value()) << text;
  EXPECT_GE(r.report.target.fp16_correlation, 0.999) << text;
  EXPECT_TRUE(r.report.target.clean) << text;
  EXPECT_TRUE(r.report.written) << text;
}

// SAM 2 at 1024x1024 needs both: a large baked constant fed from the host
// and the fp16-safe norm. The norm rebuild used to redo the fix without the
// host feeding, leaving the constant flagged and the file unwritten.
TEST(ConvertTarget, Fp16SafeNormRebuildKeepsTheHostFedConstants) {
  OnnxTestModel m = PreLnBlock();
  constexpr int64_t kRows = 256, kCols = 1024;  // 1 MiB of float32: the rule's threshold
  m.Input("z", {1, kRows, kCols});
  m.InitF32("table", {1, kRows, kCols}, RandomValues(kRows * kCols, 34, 1.0f));
  m.Node("Add", {"z", "table"}, {"z_plus"});
  m.Node("Relu", {"z_plus"}, {"z_out"});
  m.Output("z_out");
  testing::TempDir dir;
  const convert::Result r = ConvertForTarget(m, dir, "preln_table", "mldrift-cl@2.1.6");
  const std::string text = r.report.RenderText();
  ASSERT_TRUE(r.report.target.fp32_largest_before.has_value()) << "the norm was not rebuilt: " << text;
  EXPECT_EQ(r.report.target.host_fed.size(), 1u) << text;
  EXPECT_TRUE(r.report.target.clean) << text;
  EXPECT_TRUE(r.report.proven) << text;
  EXPECT_TRUE(r.report.written) << text;
}

// A deformable sampler's GridSample (bilinear, zeros) lowers gather-free and
// runs wholly on the real WebGPU delegate, close to onnxruntime in fp16.
TEST(ConvertTarget, GridSampleRunsOnWebGpu) {
  testing::TempDir dir;
  OnnxTestModel m;
  m.Input("features", {1, 16, 12, 12});
  m.Input("offsets", {1, 6, 8, 2});
  m.Node("Tanh", {"offsets"}, {"grid"});
  m.Node("GridSample", {"features", "grid"}, {"sampled"}).Int("align_corners", 0);
  m.Output("sampled");
  const std::string onnx = m.Write(dir.file("sampler.onnx"));
  const nlohmann::json j = ConvertAndProbe(onnx, dir.file("sampler.tflite"), "mldrift-webgpu@2.5.3");
  ASSERT_FALSE(j.empty());
  EXPECT_EQ(j["ops_out"].count("GATHER_ND"), 0u) << j["ops_out"].dump();
  ExpectWhollyOnWebGpu(j);
}

// A CTC recogniser's head: per time step log-probabilities (LogSoftmax) and
// the least likely class (ArgMin). Both lower to ops the WebGPU delegate
// rejects; log-softmax-decompose and arg-min-to-arg-max make the head run
// wholly on it.
TEST(ConvertTarget, LogSoftmaxAndArgMinHeadRunsOnWebGpu) {
  testing::TempDir dir;
  OnnxTestModel m;
  m.Input("features", {1, 8, 40});
  m.InitF32("w", {40, 37}, RandomValues(40 * 37, 21, 0.5f));
  m.Node("MatMul", {"features", "w"}, {"logits"});
  m.Node("LogSoftmax", {"logits"}, {"logprobs"}).Int("axis", -1);
  m.Node("ArgMin", {"logits"}, {"least"}).Int("axis", -1).Int("keepdims", 0);
  m.Node("Cast", {"least"}, {"least_f"}).Int("to", 1);
  m.Output("logprobs");
  m.Output("least_f");
  const std::string onnx = m.Write(dir.file("head.onnx"));
  const nlohmann::json j = ConvertAndProbe(onnx, dir.file("head.tflite"), "mldrift-webgpu@2.5.3");
  ASSERT_FALSE(j.empty());
  EXPECT_EQ(j["ops_out"].count("LOG_SOFTMAX"), 0u) << j["ops_out"].dump();
  EXPECT_EQ(j["ops_out"].count("ARG_MIN"), 0u) << j["ops_out"].dump();
  ExpectWhollyOnWebGpu(j);
}

}  // namespace
}  // namespace gpuclean
