// Micro-probes: one tiny graph per lint rule (docs/lint.md) that triggers it,
// and a near-miss that differs in exactly the property the rule checks.
// tests/lint asserts each rule fires on the first and not on the second;
// tests/synth runs all of them on LiteRT.js WebGPU in one batch and compares
// the measured residency with lint's prediction.
#include <optional>

#include "gpuclean/builder.h"
#include "gpuclean/lint.h"
#include "synth/graphs.h"

namespace gpuclean::synth::internal {
namespace {

using builder::GraphBuilder;

std::vector<float> Filled(size_t n, float value = 0.5f) { return std::vector<float>(n, value); }

// A rank-5 reshape (pixel shuffle, 6-D window partitions) vs the same data
// kept 4-D.
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
    // The builder stores shapes as constants; a converter that lost the
    // static shape feeds it from a graph input instead.
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

// Max-pool with -inf-style padding (PADV2) vs zero padding after a ReLU.
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

// Row selection three ways; the strided slice is the GPU-clean form.
ir::Model Gather(tfl::BuiltinOperator code) {
  GraphBuilder b;
  int x = b.Input("x", F32, {4, 8});
  if (code == tfl::BuiltinOperator_GATHER)
    b.Output(b.Gather(x, b.ConstI32("i", {2}, {0, 2}), 0));
  else if (code == tfl::BuiltinOperator_GATHER_ND)
    b.Output(b.GatherNd(x, b.ConstI32("i", {2, 1}, {0, 2})));
  else
    b.Output(b.StridedSlice(x, {0, 0}, {4, 8}, {2, 1}));
  return b.Finish();
}

ir::Model TopK(int channels) {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, channels});
  b.Output(b.TopKV2(x, 2).first);
  return b.Finish();
}

// Attention over folded queries: the constant as the first BATCH_MATMUL
// operand (declined on WebGPU) vs as the second.
ir::Model BmmConst(bool constant_first) {
  GraphBuilder b;
  int x = b.Input("x", F32, {2, 4, 4});
  int c = b.ConstF32("c", {2, 4, 4}, Filled(32));
  b.Output(constant_first ? b.BatchMatMul(c, x) : b.BatchMatMul(x, c));
  return b.Finish();
}

// MediaPipe's custom ops. TransformLandmarks is one of the face-landmark
// attention model's three; LiteRT.js registers no kernel for it.
enum class MediaPipeOp { kTransformLandmarks, kMaxUnpool };

ir::Model MediaPipeCustom(MediaPipeOp which) {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 4, 4, 4});
  int y = b.Relu(x);
  switch (which) {
    case MediaPipeOp::kTransformLandmarks: {
      int landmarks = b.Reshape(y, {1, 1, 16, 4});
      int matrix = b.ConstF32("matrix", {1, 4, 4}, {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1});
      y = b.Custom("TransformLandmarks", {landmarks, matrix}, {}, {{F32, {1, 1, 16, 4}}}).at(0);
      break;
    }
    case MediaPipeOp::kMaxUnpool: {
      auto [pooled, indices] = b.MaxPoolingWithArgmax2D(y, tfl::Padding_VALID, 2, 2, 2, 2);
      y = b.MaxUnpooling2D(pooled, indices, tfl::Padding_VALID, 2, 2, 2, 2);
      break;
    }
  }
  b.Output(b.Relu(y));
  return b.Finish();
}

ir::Model HardSigmoid() {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 8});
  b.Output(b.Relu0To1(x));
  return b.Finish();
}

// Attention scores plus a mask broadcast over heads vs pre-expanded.
ir::Model MaskedScores(const builder::Shape& mask_shape) {
  GraphBuilder b;
  int q = b.Input("q", F32, {1, 2, 4, 8});
  int k = b.Input("k", F32, {1, 2, 8, 4});
  int mask = b.ConstF32("mask", mask_shape, Filled(ir::Tensor{.shape = mask_shape}.num_elements(), -30000.0f));
  b.Output(b.Softmax(b.Add(b.BatchMatMul(q, k), mask)));
  return b.Finish();
}

// A recurrent state update whose ADD is a graph output and also consumed.
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

// x ** 2 as a converter writes it (POW with a constant exponent) vs the same
// square as MUL(x, x).
ir::Model Power(bool pow) {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 8});
  b.Output(pow ? b.Pow(x, b.ConstF32("two", {}, {2.0f})) : b.Mul(x, x));
  return b.Finish();
}

// where(x > 0.5, x, -1) by SELECT or SELECT_V2 vs the arithmetic blend
// x*m + fill*(1-m) with m = CAST(x > 0.5) that select-to-blend writes.
ir::Model WhereMask(std::optional<tfl::BuiltinOperator> select) {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 8});
  int keep = b.Greater(x, b.ConstF32("threshold", {}, {0.5f}));
  int fill = b.ConstF32("fill", {1, 8}, Filled(8, -1.0f));
  if (select == tfl::BuiltinOperator_SELECT) {
    b.Output(b.Select(keep, x, fill));
  } else if (select == tfl::BuiltinOperator_SELECT_V2) {
    b.Output(b.SelectV2(keep, x, fill));
  } else {
    int m = b.Cast(keep, F32);
    b.Output(b.Add(b.Mul(x, m), b.Mul(fill, b.Sub(b.ConstF32("one", {}, {1.0f}), m))));
  }
  return b.Finish();
}

struct ProbePair {
  const char* name;
  const char* rule;
  const char* target;
  const char* shows;     // the bad graph
  const char* ok_shows;  // the near-miss
  std::function<ir::Model()> bad, ok;
};

}  // namespace

std::vector<SynthGraph> ProbeGraphs() {
  // The field-report rules these probes show were written for 2.1.6 (the
  // rule-edge probes of the source-read targets come from `synth --edges`).
  const char* kDefault = "mldrift-cl@2.1.6";
  const std::vector<ProbePair> pairs = {
      {"rank5-reshape", "rank-5", kDefault, "a RESHAPE to a 5-D tensor (pixel shuffle, window partition)",
       "the same data kept 4-D", [] { return Rank(5); }, [] { return Rank(4); }},
      {"broadcast-to-runtime", "broadcast-to-runtime", kDefault, "BROADCAST_TO on a runtime tensor (LiteRT#9191)",
       "BROADCAST_TO on a constant", [] { return BroadcastTo(true); }, [] { return BroadcastTo(false); }},
      {"const-only-add", "all-const-inputs", kDefault, "an ADD whose inputs are both constants",
       "the ADD with one runtime input", [] { return ConstOnlyAdd(true); }, [] { return ConstOnlyAdd(false); }},
      {"div-same-tensor", "div-identical-inputs", kDefault, "DIV(x, x) (LiteRT#9192)", "DIV(x, y)",
       [] { return Div(true); }, [] { return Div(false); }},
      {"dynamic-batch", "dynamic-shape", kDefault, "-1 in the batch dimension of shape_signature",
       "a static shape_signature", [] { return DynamicSignature(true); }, [] { return DynamicSignature(false); }},
      {"reshape-runtime-shape", "reshape-runtime-shape", kDefault, "RESHAPE whose shape comes from a graph input",
       "RESHAPE with a constant shape", [] { return ReshapeShape(true); }, [] { return ReshapeShape(false); }},
      {"resize-align-half", "resize-bilinear-align-half", kDefault,
       "RESIZE_BILINEAR with align_corners and half_pixel_centers both set", "half_pixel_centers only",
       [] { return Resize(true); }, [] { return Resize(false); }},
      {"padv2-maxpool", "padv2-nonzero", kDefault, "max-pool padding by PADV2 with -1e9",
       "PAD with 0 after the ReLU, then VALID max-pool (exact)", [] { return PadValue(-1e9f, true); },
       [] { return PadValue(0.0f, false); }},
      {"transpose-conv", "transpose-conv", kDefault, "a stride-2 TRANSPOSE_CONV upsample",
       "nearest upsample then CONV_2D", [] { return Upsample(true); }, [] { return Upsample(false); }},
      {"split", "split", kDefault, "SPLIT of the channels into halves", "two SLICEs", [] { return Split(true); },
       [] { return Split(false); }},
      {"pack", "pack", kDefault, "PACK of two tensors", "CONCATENATION of the same tensors", [] { return Pack(true); },
       [] { return Pack(false); }},
      {"cast-to-uint8", "cast", kDefault, "CAST float32 -> uint8", "CAST float32 -> int32 (allowed)",
       [] { return Cast(tfl::TensorType_UINT8); }, [] { return Cast(tfl::TensorType_INT32); }},
      {"gather-rows", "gather", kDefault, "GATHER of rows 0 and 2", "the same rows by a stride-2 STRIDED_SLICE",
       [] { return Gather(tfl::BuiltinOperator_GATHER); }, [] { return Gather(tfl::BuiltinOperator_STRIDED_SLICE); }},
      {"gather-nd-rows", "gather-nd", kDefault, "GATHER_ND of rows 0 and 2 (stride-2 slicing as converters emit it)",
       "the same rows by a stride-2 STRIDED_SLICE", [] { return Gather(tfl::BuiltinOperator_GATHER_ND); },
       [] { return Gather(tfl::BuiltinOperator_STRIDED_SLICE); }},
      {"topk-6-channels", "topk-v2-channels", kDefault, "TOPK_V2 over 6 channels (not a multiple of 4)",
       "TOPK_V2 over 8 channels", [] { return TopK(6); }, [] { return TopK(8); }},
      {"bmm-const-lhs", "batch-matmul-const-lhs", "mldrift-webgpu@2.5.3",
       "BATCH_MATMUL whose first operand is a constant (folded decoder queries)", "the constant as the second operand",
       [] { return BmmConst(true); }, [] { return BmmConst(false); }},
      {"hard-sigmoid", "relu-0-to-1", "mldrift-cl@2.1.5", "RELU_0_TO_1 (taken on 2.1.3, rejected from 2.1.5)",
       "a plain RELU", HardSigmoid, [] { return Chain(1); }},
      {"bmm-mask-add", "add-broadcast-after-bmm", "mldrift-cl@2.1.5",
       "attention scores + a [1,1,S,S] mask broadcast over heads (LiteRT#8593)", "the mask pre-expanded to [1,H,S,S]",
       [] {
         return MaskedScores({1, 1, 4, 4});
       },
       [] {
         return MaskedScores({1, 2, 4, 4});
       }},
      {"add-output-alias", "add-output-alias", kDefault,
       "an ADD of two runtime tensors that is a graph output and also consumed (LiteRT#8599)",
       "the ADD as a sole leaf output", [] { return StateUpdate(true); }, [] { return StateUpdate(false); }},
      {"token-output-fanout", "token-output-fanout", kDefault, "a [1,N,C] token tensor that is an output and consumed",
       "the same tensor 4-D", [] { return TokenOutput(3); }, [] { return TokenOutput(4); }},
      {"layerscale-fc", "layerscale-after-fc", kDefault, "a 2-D FULLY_CONNECTED output times a [C] gamma (LayerScale)",
       "one row (N = 1)", [] { return LayerScale(8); }, [] { return LayerScale(1); }},
      {"reduce-extent-mean", "reduce-extent", kDefault, "MEAN over 256x256 spatial in one op (65536 elements)",
       "MEAN over 64x64 (4096 elements)", [] { return GlobalMean(256); }, [] { return GlobalMean(64); }},
      {"baked-pos-embed", "large-constant", kDefault, "a 262144-element constant added to the activations",
       "a 16384-element constant", [] { return BakedTable(1024); }, [] { return BakedTable(64); }},
      {"densify-weights", "densify", kDefault, "sparse FULLY_CONNECTED weights behind DENSIFY",
       "the same weights stored dense", [] { return SparseWeights(true); }, [] { return SparseWeights(false); }},
      {"int64-ids", "int64", kDefault, "an int64 id input cast to float", "int32 ids",
       [] { return IdsCast(tfl::TensorType_INT64); }, [] { return IdsCast(tfl::TensorType_INT32); }},
      {"pow-square", "pow", kDefault, "POW(x, 2), a converter's x ** 2", "the square as MUL(x, x)",
       [] { return Power(true); }, [] { return Power(false); }},
      {"where-select", "select", kDefault, "where(x > 0.5, x, -1) by SELECT",
       "the arithmetic blend x*m + fill*(1-m), m = CAST(x > 0.5)",
       [] { return WhereMask(tfl::BuiltinOperator_SELECT); }, [] { return WhereMask(std::nullopt); }},
      {"where-select-v2", "select-v2", kDefault, "where(x > 0.5, x, -1) by SELECT_V2",
       "the arithmetic blend x*m + fill*(1-m), m = CAST(x > 0.5)",
       [] { return WhereMask(tfl::BuiltinOperator_SELECT_V2); }, [] { return WhereMask(std::nullopt); }},
      {"custom-unregistered", "custom-unregistered", "mldrift-webgpu@2.5.3",
       "MediaPipe's TransformLandmarks custom op, which LiteRT.js registers no kernel for",
       "MediaPipe's MaxPoolingWithArgmax2D and MaxUnpooling2D, which it registers and delegates",
       [] { return MediaPipeCustom(MediaPipeOp::kTransformLandmarks); },
       [] { return MediaPipeCustom(MediaPipeOp::kMaxUnpool); }},
      {"relu-chain-1001", "compile-ceiling", kDefault, "1001 chained RELUs, past the compile-ceiling threshold",
       "100 chained RELUs", [] { return Chain(1001); }, [] { return Chain(100); }},
  };
  std::vector<SynthGraph> out;
  for (const ProbePair& p : pairs) {
    const std::string ok_name = std::string(p.name) + ".ok";
    out.push_back({.name = p.name,
                   .group = Group::kProbe,
                   .fixed = false,
                   .counterpart = ok_name,
                   .shows = p.shows,
                   .rule = p.rule,
                   .target = p.target,
                   .build = p.bad});
    out.push_back({.name = ok_name,
                   .group = Group::kProbe,
                   .fixed = true,
                   .counterpart = p.name,
                   .shows = p.ok_shows,
                   .rule = p.rule,
                   .target = p.target,
                   .build = p.ok});
  }
  return out;
}

}  // namespace gpuclean::synth::internal
