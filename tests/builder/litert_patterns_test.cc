// ctest-labels: litert
// Multi-op graphs shaped like real models: a small classifier, a MediaPipe
// style fp16 block with squeeze-excite and a transposed-conv head, an
// attention block with layer norm, and an argmax-pool / unpool decoder with
// per-channel int8 weights.
#include "builder/litert_case.h"
#include "support/tflite_names.h"

namespace gpuclean::testing {
namespace {

using ::gpuclean::testing::tflite_names::kRelu;
using ::gpuclean::testing::tflite_names::kSame;
using ::gpuclean::testing::tflite_names::kValid;

ir::Model Classifier() {
  GraphBuilder b;
  const int x = b.Input("image", F32(), {1, 16, 16, 3});
  const int w = b.ConstF32("conv/w", {8, 3, 3, 3}, Ramp(216, 51, -0.3f, 0.3f));
  const int bias = b.ConstF32("conv/b", {8}, Ramp(8, 52, -0.1f, 0.1f));
  int y = b.Relu(b.Conv2D(x, w, bias, kSame, 2, 2));  // [1,8,8,8]
  y = b.MaxPool2D(y, kValid, 2, 2, 2, 2);             // [1,4,4,8]
  y = b.Reshape(y, {1, -1});                          // [1,128]
  const int fc_w = b.ConstF32("fc/w", {10, 128}, Ramp(1280, 53, -0.1f, 0.1f));
  const int fc_b = b.ConstF32("fc/b", {10}, Ramp(10, 54, -0.1f, 0.1f));
  y = b.Softmax(b.FullyConnected(y, fc_w, fc_b));  // [1,10]
  b.Output(y);
  return b.Finish();
}

ir::Model Fp16MobileBlock() {
  GraphBuilder b;
  auto fp16_weights = [&](const std::string& name, Shape shape, uint32_t seed) {
    const int64_t n = Elements(shape);
    return b.Dequantize(b.ConstF16FromF32(name, std::move(shape), Ramp(n, seed, -0.4f, 0.4f)));
  };
  const int x = b.Input("input", F32(), {1, 16, 16, 4});
  int y = b.Conv2D(x, fp16_weights("expand/w", {16, 1, 1, 4}, 61), fp16_weights("expand/b", {16}, 62), kSame, 1, 1);
  y = b.HardSwish(y);
  y = b.DepthwiseConv2D(y, fp16_weights("dw/w", {1, 3, 3, 16}, 63), fp16_weights("dw/b", {16}, 64), kSame, 2, 2,
                        kRelu);  // [1,8,8,16]
  // Squeeze-and-excite: global pool, bottleneck, sigmoid gate.
  int gate = b.AveragePool2D(y, kValid, 8, 8, 8, 8);  // [1,1,1,16]
  gate = b.Conv2D(gate, fp16_weights("se/w1", {4, 1, 1, 16}, 65), fp16_weights("se/b1", {4}, 66), kSame, 1, 1, kRelu);
  gate = b.Logistic(
      b.Conv2D(gate, fp16_weights("se/w2", {16, 1, 1, 4}, 67), fp16_weights("se/b2", {16}, 68), kSame, 1, 1));
  y = b.Mul(y, gate);
  y = b.ResizeBilinear(y, 16, 16);
  const int head_w = b.ConstF32("head/w", {2, 2, 2, 16}, Ramp(128, 69, -0.2f, 0.2f));
  const int head_b = b.ConstF32("head/b", {2}, {0.1f, -0.1f});
  y = b.Logistic(b.Convolution2DTransposeBias(y, head_w, head_b, kSame, 2, 2));  // [1,32,32,2]
  b.Output(y);
  return b.Finish();
}

ir::Model AttentionBlock() {
  GraphBuilder b;
  const int x = b.Input("tokens", F32(), {1, 4, 8});
  const int qkv_w = b.ConstF32("qkv/w", {24, 8}, Ramp(192, 71, -0.3f, 0.3f));
  const int qkv = b.FullyConnected(x, qkv_w, builder::kNoInput, builder::kNoActivation, /*keep_num_dims=*/true);
  const std::vector<int> parts = b.Split(qkv, -1, 3);                     // q, k, v: [1,4,8]
  int scores = b.BatchMatMul(parts[0], parts[1], false, /*adj_y=*/true);  // [1,4,4]
  scores = b.Mul(scores, b.ConstF32("scale", {1}, {0.35355339f}));
  const int attended = b.BatchMatMul(b.Softmax(scores), parts[2]);  // [1,4,8]
  const int residual = b.Add(x, attended);
  // Layer norm over the feature axis.
  const int mean = b.Mean(residual, {-1}, true);
  const int centered = b.Sub(residual, mean);
  const int variance = b.Mean(b.Square(centered), {-1}, true);
  const int inv_std = b.Rsqrt(b.Add(variance, b.ConstF32("epsilon", {1}, {1e-5f})));
  b.Output(b.Mul(centered, inv_std));
  return b.Finish();
}

ir::Model ArgmaxUnpoolDecoder() {
  GraphBuilder b;
  const int x = b.Input("features", F32(), {1, 8, 8, 4});
  auto [pooled, indices] = b.MaxPoolingWithArgmax2D(x, kSame, 2, 2, 2, 2);  // [1,4,4,4]
  std::vector<int8_t> q(144);
  for (size_t i = 0; i < q.size(); ++i) q[i] = static_cast<int8_t>(static_cast<int>(i * 37 % 255) - 127);
  const int w = b.Dequantize(b.ConstInt8PerChannel("conv/w_int8", {4, 3, 3, 4}, q, {0.01f, 0.02f, 0.005f, 0.015f}, 0));
  const int refined = b.Conv2D(pooled, w, b.ConstF32("conv/b", {4}, {0, 0.1f, 0.2f, 0.3f}), kSame, 1, 1, kRelu);
  // VALID: LiteRT.js (XNNPACK) logs an error for SAME unpooling.
  const int unpooled = b.MaxUnpooling2D(refined, indices, kValid, 2, 2, 2, 2);  // [1,8,8,4]
  const int joined = b.Concatenation({x, unpooled}, 3);                         // [1,8,8,8]
  const int out_w = b.ConstF32("out/w", {2, 1, 1, 8}, Ramp(16, 81, -0.5f, 0.5f));
  b.Output(b.Conv2D(joined, out_w, b.ConstF32("out/b", {2}, {0, 0}), kSame, 1, 1));
  return b.Finish();
}

}  // namespace

std::vector<OpCase> PatternCases() {
  std::vector<OpCase> cases;
  OpCase classifier;
  classifier.name = "PATTERN_conv_relu_pool_reshape_fc_softmax";
  classifier.build = Classifier;
  classifier.check = [](const Arrays&, const Arrays& out) {
    float total = 0;
    for (float p : Floats(out[0])) total += p;
    EXPECT_NEAR(total, 1.0f, 1e-5f);
  };
  cases.push_back(classifier);

  OpCase mobile;
  mobile.name = "PATTERN_fp16_mobile_block_with_transpose_conv_head";
  mobile.build = Fp16MobileBlock;
  cases.push_back(mobile);

  OpCase attention;
  attention.name = "PATTERN_attention_layer_norm";
  attention.build = AttentionBlock;
  attention.check = [](const Arrays&, const Arrays& out) {
    // Every token comes out with zero mean and unit variance.
    const std::vector<float> y = Floats(out[0]);
    for (int t = 0; t < 4; ++t) {
      double sum = 0, squares = 0;
      for (int c = 0; c < 8; ++c) {
        sum += y[t * 8 + c];
        squares += static_cast<double>(y[t * 8 + c]) * y[t * 8 + c];
      }
      EXPECT_NEAR(sum / 8, 0.0, 1e-4);
      EXPECT_NEAR(squares / 8, 1.0, 1e-2);
    }
  };
  cases.push_back(attention);

  OpCase decoder;
  decoder.name = "PATTERN_argmax_pool_int8_conv_unpool";
  decoder.build = ArgmaxUnpoolDecoder;
  cases.push_back(decoder);
  return cases;
}

}  // namespace gpuclean::testing
