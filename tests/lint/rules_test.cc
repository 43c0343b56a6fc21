// One micro-probe per rule: the rule fires on the bad graph and stays silent
// on the fixed (near-miss) graph.
#include "lint_test_util.h"

namespace gpuclean::lint {
namespace {

using builder::GraphBuilder;
using testing::CountRule;
using testing::LintOn;
constexpr auto F32 = tfl::TensorType_FLOAT32;

std::vector<float> Filled(size_t n, float value = 0.5f) { return std::vector<float>(n, value); }

struct Probe {
  const char* rule;
  const char* target;
  std::function<ir::Model()> bad;
  std::function<ir::Model()> near_miss;
};

ir::Model Rank(int rank) {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 2, 3, 4});
  builder::Shape shape = rank == 5 ? builder::Shape{1, 2, 3, 2, 2} : builder::Shape{2, 3, 2, 2};
  b.Output(b.Reshape(b.Relu(b.Reshape(x, shape)), {1, 2, 3, 4}));
  return b.Finish();
}

ir::Model BroadcastTo(bool runtime) {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 1, 4});
  int src = runtime ? x : b.ConstF32("c", {1, 1, 4}, Filled(4));
  b.Output(b.Add(b.BroadcastTo(src, {1, 3, 4}), x));
  return b.Finish();
}

ir::Model ConstOnlyAdd(bool both_const) {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 4});
  int c1 = b.ConstF32("c1", {1, 4}, Filled(4));
  int c2 = b.ConstF32("c2", {1, 4}, Filled(4, 2.0f));
  b.Output(b.Mul(b.Add(c1, both_const ? c2 : x), x));
  return b.Finish();
}

ir::Model Div(bool identical) {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 4});
  int y = b.Input("y", F32, {1, 4});
  b.Output(b.Div(x, identical ? x : y));
  return b.Finish();
}

ir::Model DynamicSignature(bool dynamic) {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 8, 8, 4});
  b.Output(b.Relu(x));
  ir::Model m = b.Finish();
  for (ir::Tensor& t : m.main().tensors) {
    t.shape_signature = t.shape;
    if (dynamic) t.shape_signature[0] = -1;
  }
  return m;
}

ir::Model ReshapeShape(bool runtime) {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 8});
  b.Output(b.Reshape(x, {2, 4}));
  ir::Model m = b.Finish();
  if (runtime) {
    ir::Subgraph& g = m.main();
    ir::Tensor shape;
    shape.name = "shape";
    shape.dtype = tfl::TensorType_INT32;
    shape.shape = {2};
    int t = g.AddTensor(shape);
    g.inputs.push_back(t);
    g.ops[0].inputs[1] = t;
  }
  return m;
}

ir::Model Resize(bool both_flags) {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 4, 4, 3});
  b.Output(b.ResizeBilinear(x, 8, 8, false, true));
  ir::Model m = b.Finish();
  // The builder refuses the pair, as LiteRT's CPU kernel does; converters still write it.
  if (both_flags) m.main().ops[0].options.AsResizeBilinearOptions()->align_corners = true;
  return m;
}

ir::Model PadValue(float value, bool v2) {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 4, 4, 3});
  builder::Paddings pads = {{0, 0}, {1, 1}, {1, 1}, {0, 0}};
  int padded = v2 ? b.PadV2(b.Relu(x), pads, value) : b.Pad(b.Relu(x), pads);
  b.Output(b.MaxPool2D(padded, tfl::Padding_VALID, 2, 2, 3, 3));
  return b.Finish();
}

ir::Model Upsample(bool transpose_conv) {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 4, 4, 3});
  int w = b.ConstF32("w", {2, 3, 3, 3}, Filled(54));
  int y = transpose_conv ? b.TransposeConv(x, w, builder::kNoInput, {1, 8, 8, 2}, tfl::Padding_SAME, 2, 2)
                         : b.Conv2D(b.ResizeNearestNeighbor(x, 8, 8), w, builder::kNoInput, tfl::Padding_SAME, 1, 1);
  b.Output(y);
  return b.Finish();
}

ir::Model Split(bool split) {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 4, 4, 8});
  if (split) {
    auto parts = b.Split(x, 3, 2);
    b.Output(b.Add(parts[0], parts[1]));
  } else {
    b.Output(b.Add(b.Slice(x, {0, 0, 0, 0}, {1, 4, 4, 4}), b.Slice(x, {0, 0, 0, 4}, {1, 4, 4, 4})));
  }
  return b.Finish();
}

ir::Model Pack(bool pack) {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 4, 4});
  int y = b.Input("y", F32, {1, 4, 4});
  b.Output(pack ? b.Pack({x, y}, 0) : b.Concatenation({x, y}, 0));
  return b.Finish();
}

ir::Model Cast(tfl::TensorType to) {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 4});
  b.Output(b.Cast(x, to));
  return b.Finish();
}

ir::Model Gather(tfl::BuiltinOperator code) {
  GraphBuilder b;
  int x = b.Input("x", F32, {4, 8});
  if (code == tfl::BuiltinOperator_GATHER) b.Output(b.Gather(x, b.ConstI32("i", {2}, {0, 2}), 0));
  else if (code == tfl::BuiltinOperator_GATHER_ND) b.Output(b.GatherNd(x, b.ConstI32("i", {2, 1}, {0, 2})));
  else b.Output(b.StridedSlice(x, {0, 0}, {4, 8}, {2, 1}));
  return b.Finish();
}

ir::Model TopK(int channels) {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, channels});
  b.Output(b.TopKV2(x, 2).first);
  return b.Finish();
}

ir::Model HardSigmoid() {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 8});
  b.Output(b.Relu0To1(x));
  return b.Finish();
}

ir::Model MaskedScores(const builder::Shape& mask_shape) {
  GraphBuilder b;
  int q = b.Input("q", F32, {1, 2, 4, 8});
  int k = b.Input("k", F32, {1, 2, 8, 4});
  int mask = b.ConstF32("mask", mask_shape, Filled(ir::Tensor{.shape = mask_shape}.num_elements(), -30000.0f));
  b.Output(b.Softmax(b.Add(b.BatchMatMul(q, k), mask)));
  return b.Finish();
}

ir::Model StateUpdate(bool consumed) {
  GraphBuilder b;
  int acc = b.Input("acc", F32, {1, 8});
  int delta = b.Input("delta", F32, {1, 8});
  int next = b.Add(acc, delta);
  b.Output(next);
  if (consumed) b.Output(b.Mul(next, delta));
  return b.Finish();
}

ir::Model TokenOutput(int rank) {
  GraphBuilder b;
  int x = b.Input("x", F32, rank == 3 ? builder::Shape{1, 16, 8} : builder::Shape{1, 4, 4, 8});
  int tokens = b.Relu(x);
  b.Output(tokens);
  b.Output(b.Logistic(tokens));
  return b.Finish();
}

ir::Model LayerScale(int rows) {
  GraphBuilder b;
  int x = b.Input("x", F32, {rows, 16});
  int w = b.ConstF32("w", {32, 16}, Filled(512));
  int gamma = b.ConstF32("gamma", {32}, Filled(32, 0.1f));
  b.Output(b.Mul(b.FullyConnected(x, w, builder::kNoInput), gamma));
  return b.Finish();
}

ir::Model GlobalMean(int side) {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, side, side, 4});
  b.Output(b.Mean(x, {1, 2}, true));
  return b.Finish();
}

ir::Model BakedTable(int rows) {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, rows, 256});
  int table = b.ConstF32("pos_embed", {1, rows, 256}, Filled(static_cast<size_t>(rows) * 256));
  b.Output(b.Add(x, table));
  return b.Finish();
}

ir::Model SparseWeights(bool sparse) {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 8});
  std::vector<float> dense(32, 0.0f);
  dense[3] = 1.0f;
  dense[17] = 2.0f;
  int w = sparse ? b.Densify(b.ConstSparseF32("w", {4, 8}, dense)) : b.ConstF32("w", {4, 8}, dense);
  b.Output(b.FullyConnected(x, w, builder::kNoInput));
  return b.Finish();
}

ir::Model IdsCast(tfl::TensorType ids) {
  GraphBuilder b;
  int x = b.Input("ids", ids, {1, 4});
  b.Output(b.Cast(x, F32));
  return b.Finish();
}

ir::Model Chain(int length) {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 8});
  for (int i = 0; i < length; ++i) x = b.Relu(x);
  b.Output(x);
  return b.Finish();
}

const std::vector<Probe>& Probes() {
  static const std::vector<Probe> probes = {
      {"rank-5", kDefaultTarget, [] { return Rank(5); }, [] { return Rank(4); }},
      {"broadcast-to-runtime", kDefaultTarget, [] { return BroadcastTo(true); }, [] { return BroadcastTo(false); }},
      {"all-const-inputs", kDefaultTarget, [] { return ConstOnlyAdd(true); }, [] { return ConstOnlyAdd(false); }},
      {"div-identical-inputs", kDefaultTarget, [] { return Div(true); }, [] { return Div(false); }},
      {"dynamic-shape", kDefaultTarget, [] { return DynamicSignature(true); }, [] { return DynamicSignature(false); }},
      {"reshape-runtime-shape", kDefaultTarget, [] { return ReshapeShape(true); }, [] { return ReshapeShape(false); }},
      {"resize-bilinear-align-half", kDefaultTarget, [] { return Resize(true); }, [] { return Resize(false); }},
      {"padv2-nonzero", kDefaultTarget, [] { return PadValue(-1e9f, true); }, [] { return PadValue(0.0f, false); }},
      {"transpose-conv", kDefaultTarget, [] { return Upsample(true); }, [] { return Upsample(false); }},
      {"split", kDefaultTarget, [] { return Split(true); }, [] { return Split(false); }},
      {"pack", kDefaultTarget, [] { return Pack(true); }, [] { return Pack(false); }},
      {"cast", kDefaultTarget, [] { return Cast(tfl::TensorType_UINT8); }, [] { return Cast(tfl::TensorType_INT32); }},
      {"gather", kDefaultTarget, [] { return Gather(tfl::BuiltinOperator_GATHER); }, [] { return Gather(tfl::BuiltinOperator_STRIDED_SLICE); }},
      {"gather-nd", kDefaultTarget, [] { return Gather(tfl::BuiltinOperator_GATHER_ND); }, [] { return Gather(tfl::BuiltinOperator_STRIDED_SLICE); }},
      {"topk-v2-channels", kDefaultTarget, [] { return TopK(6); }, [] { return TopK(8); }},
      {"relu-0-to-1", "mldrift-cl@2.1.5", HardSigmoid, [] { return Chain(1); }},
      {"add-broadcast-after-bmm", "mldrift-cl@2.1.5", [] { return MaskedScores({1, 1, 4, 4}); },
       [] { return MaskedScores({1, 2, 4, 4}); }},
      {"add-output-alias", kDefaultTarget, [] { return StateUpdate(true); }, [] { return StateUpdate(false); }},
      {"token-output-fanout", kDefaultTarget, [] { return TokenOutput(3); }, [] { return TokenOutput(4); }},
      {"layerscale-after-fc", kDefaultTarget, [] { return LayerScale(8); }, [] { return LayerScale(1); }},
      {"reduce-extent", kDefaultTarget, [] { return GlobalMean(256); }, [] { return GlobalMean(64); }},
      {"large-constant", kDefaultTarget, [] { return BakedTable(1024); }, [] { return BakedTable(64); }},
      {"densify", kDefaultTarget, [] { return SparseWeights(true); }, [] { return SparseWeights(false); }},
      {"int64", kDefaultTarget, [] { return IdsCast(tfl::TensorType_INT64); }, [] { return IdsCast(tfl::TensorType_INT32); }},
      {"compile-ceiling", kDefaultTarget, [] { return Chain(1001); }, [] { return Chain(100); }},
  };
  return probes;
}

class RuleProbe : public ::testing::TestWithParam<size_t> {};

TEST_P(RuleProbe, FiresOnTheBadGraphOnly) {
  const Probe& probe = Probes()[GetParam()];
  Report bad = LintOn(probe.bad(), probe.target);
  ASSERT_GE(CountRule(bad, probe.rule), 1) << probe.rule << "\n" << RenderText(bad, testing::Target(probe.target));
  const Finding& f = *testing::FirstOf(bad, probe.rule);
  EXPECT_FALSE(f.why.empty());
  EXPECT_FALSE(f.consequence.empty());
  EXPECT_FALSE(f.provenance.empty());
  EXPECT_FALSE(f.evidence.source.empty());
  if (f.node >= 0) EXPECT_FALSE(f.tensors.empty());
  EXPECT_FALSE(f.fix_pass.empty()) << probe.rule << " names no rewrite";
  Report good = LintOn(probe.near_miss(), probe.target);
  EXPECT_EQ(CountRule(good, probe.rule), 0) << probe.rule << "\n" << RenderText(good, testing::Target(probe.target));
}

INSTANTIATE_TEST_SUITE_P(Lint, RuleProbe, ::testing::Range<size_t>(0, Probes().size()),
                         [](const ::testing::TestParamInfo<size_t>& info) {
                           std::string name = Probes()[info.param].rule;
                           for (char& c : name)
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

TEST(RuleVersions, Relu0To1DependsOnTheRuntimeVersion) {
  EXPECT_EQ(LintOn(HardSigmoid(), "mldrift-cl@2.1.3").node_status[0][0], Status::kDelegated);
  EXPECT_EQ(LintOn(HardSigmoid(), "mldrift-cl@2.1.5").node_status[0][0], Status::kRejected);
  EXPECT_EQ(LintOn(HardSigmoid(), "mldrift-cl@2.1.6").node_status[0][0], Status::kRejected);
}

TEST(RuleVersions, BroadcastAddAfterBatchMatMulIsFixedIn216) {
  for (const char* target : {"mldrift-cl@2.1.3", "mldrift-cl@2.1.5"})
    EXPECT_EQ(testing::FirstOf(LintOn(MaskedScores({1, 1, 4, 4}), target), "add-broadcast-after-bmm")->status,
              Status::kIncorrect);
  EXPECT_EQ(CountRule(LintOn(MaskedScores({1, 1, 4, 4}), "mldrift-cl@2.1.6"), "add-broadcast-after-bmm"), 0);
}

TEST(RuleVersions, TransposeConvIsAcceptedByTheClassicChecker) {
  Report r = LintOn(Upsample(true), "tflite-gpu");
  EXPECT_EQ(r.count(Severity::kError), 0);
  EXPECT_EQ(r.residency[0].gpu_nodes, r.residency[0].nodes);
}

TEST(RuleVersions, CompileCeilingIsAWarningWithASplitHint) {
  Report r = LintOn(Chain(1001));
  const Finding* f = testing::FirstOf(r, "compile-ceiling");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kWarning);
  EXPECT_EQ(f->fix_pass, "split-graph");
  EXPECT_EQ(f->node, -1);
}

}  // namespace
}  // namespace gpuclean::lint
