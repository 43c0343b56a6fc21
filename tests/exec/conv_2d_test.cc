// ctest-labels: litert
// CONV_2D against LiteRT.js on every SIMD path: SAME/VALID, strides,
// dilations, fused activations, with and without bias, 1x1 (GEMM in place),
// 1x1 strided and KxK (implicit im2col), reductions longer than one K block,
// output depths around the register tiles, batches, groups.
#include "exec/conv_test_util.h"

namespace gpuclean::testing::convt {
namespace {

// The model-loader fuzzer's find: an input of 0 channels made the group
// count 0 and the shape rule divided by it.
TEST(Conv2D, AnInputOfNoChannelsIsRefusedNotDividedBy) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 4, 4, 0});
  const int w = b.ConstF32("w", {2, 1, 1, 1}, {1.0f, 1.0f});
  try {
    b.Conv2D(x, w, builder::kNoInput, tfl::Padding_SAME, 1, 1);
    ADD_FAILURE() << "a CONV_2D of 0 input channels was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadInput) << e.what();
    EXPECT_NE(std::string(e.what()).find("input has 0 channels"), std::string::npos) << e.what();
  }
}

TEST(Conv2D, PaddingStridesDilationsAndActivations) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 11, 13, 5});
  auto w = [&](const std::string& name, const Shape& shape) {
    return RandomConst(b, name, shape, static_cast<uint32_t>(CountOf(shape)));
  };
  auto bias = [&](const std::string& name, int n) { return RandomConst(b, name, {n}, 1000 + n); };
  b.Output(
      b.Conv2D(x, w("w1", {7, 3, 3, 5}), bias("b1", 7), tfl::Padding_SAME, 1, 1, tfl::ActivationFunctionType_RELU));
  b.Output(b.Conv2D(x, w("w2", {6, 3, 3, 5}), bias("b2", 6), tfl::Padding_VALID, 2, 2));
  b.Output(
      b.Conv2D(x, w("w3", {16, 5, 3, 5}), bias("b3", 16), tfl::Padding_SAME, 3, 2, tfl::ActivationFunctionType_RELU6));
  b.Output(b.Conv2D(x, w("w4", {9, 3, 3, 5}), bias("b4", 9), tfl::Padding_SAME, 1, 1,
                    tfl::ActivationFunctionType_RELU_N1_TO_1, 2, 3));
  b.Output(b.Conv2D(x, w("w5", {40, 1, 1, 5}), bias("b5", 40), tfl::Padding_SAME, 1, 1));
  b.Output(b.Conv2D(x, w("w6", {130, 1, 1, 5}), bias("b6", 130), tfl::Padding_VALID, 1, 1));
  b.Output(b.Conv2D(x, w("w7", {17, 1, 1, 5}), bias("b7", 17), tfl::Padding_VALID, 2, 2));
  b.Output(b.Conv2D(x, w("w8", {33, 2, 2, 5}), bias("b8", 33), tfl::Padding_VALID, 1, 1));
  b.Output(b.Conv2D(x, w("w9", {1, 4, 4, 5}), bias("b9", 1), tfl::Padding_SAME, 3, 3));
  b.Output(b.Conv2D(x, w("w10", {3, 3, 3, 5}), bias("b10", 3), tfl::Padding_VALID, 1, 2,
                    tfl::ActivationFunctionType_RELU, 2, 1));
  ExpectMatchesLiteRtAllIsas(b.Finish(), {RandomF32({1, 11, 13, 5}, 1)});
}

TEST(Conv2D, OutputDepthsAroundRegisterTilesWithBatch) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {2, 9, 10, 12});
  for (int o : {1, 7, 8, 9, 16, 17, 24, 31, 32, 33, 64, 97}) {
    const std::string s = std::to_string(o);
    b.Output(b.Conv2D(x, RandomConst(b, "k" + s, {o, 3, 3, 12}, o), RandomConst(b, "kb" + s, {o}, 100 + o),
                      tfl::Padding_SAME, 1, 1));
    b.Output(b.Conv2D(x, RandomConst(b, "p" + s, {o, 1, 1, 12}, 200 + o), RandomConst(b, "pb" + s, {o}, 300 + o),
                      tfl::Padding_SAME, 1, 1, tfl::ActivationFunctionType_RELU));
  }
  ExpectMatchesLiteRtAllIsas(b.Finish(), {RandomF32({2, 9, 10, 12}, 2)});
}

TEST(Conv2D, ReductionsLongerThanOneBlock) {
  // K = 3*3*200 = 1800 and 1x1 over 600 channels: several K blocks, C read
  // back and accumulated; narrow (in place) and wide (packed) outputs.
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 6, 7, 200});
  const int y = b.Input("y", tfl::TensorType_FLOAT32, {1, 5, 5, 600});
  b.Output(b.Conv2D(x, RandomConst(b, "w1", {33, 3, 3, 200}, 11), RandomConst(b, "b1", {33}, 12), tfl::Padding_SAME, 1,
                    1, tfl::ActivationFunctionType_RELU6));
  b.Output(
      b.Conv2D(y, RandomConst(b, "w2", {20, 1, 1, 600}, 13), RandomConst(b, "b2", {20}, 14), tfl::Padding_SAME, 1, 1));
  b.Output(b.Conv2D(y, RandomConst(b, "w3", {100, 1, 1, 600}, 15), RandomConst(b, "b3", {100}, 16), tfl::Padding_SAME,
                    1, 1, tfl::ActivationFunctionType_RELU));
  ExpectMatchesLiteRtAllIsas(b.Finish(), {RandomF32({1, 6, 7, 200}, 3), RandomF32({1, 5, 5, 600}, 4)});
}

TEST(Conv2D, FixtureLikeShapes) {
  // The shapes MediaPipe's models spend their time in: a strided 3x3 stem,
  // pointwise expansions and projections.
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 64, 64, 3});
  const int stem = b.Conv2D(x, RandomConst(b, "stem", {16, 3, 3, 3}, 21), RandomConst(b, "stem_b", {16}, 22),
                            tfl::Padding_SAME, 2, 2, tfl::ActivationFunctionType_RELU);
  const int expand = b.Conv2D(stem, RandomConst(b, "ex", {72, 1, 1, 16}, 23), RandomConst(b, "ex_b", {72}, 24),
                              tfl::Padding_SAME, 1, 1, tfl::ActivationFunctionType_RELU);
  b.Output(b.Conv2D(expand, RandomConst(b, "pr", {24, 1, 1, 72}, 25), RandomConst(b, "pr_b", {24}, 26),
                    tfl::Padding_SAME, 1, 1));
  ExpectMatchesLiteRtAllIsas(b.Finish(), {RandomF32({1, 64, 64, 3}, 5, 0.0f, 1.0f)});
}

TEST(Conv2D, GroupedConvolution) {
  // Input depth a multiple of the filter depth: groups of channels.
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 7, 8, 6});
  b.Output(b.Conv2D(x, RandomConst(b, "w1", {8, 3, 3, 3}, 31), RandomConst(b, "b1", {8}, 32), tfl::Padding_SAME, 1, 1));
  b.Output(b.Conv2D(x, RandomConst(b, "w2", {9, 1, 1, 2}, 33), RandomConst(b, "b2", {9}, 34), tfl::Padding_VALID, 2, 1,
                    tfl::ActivationFunctionType_RELU));
  ExpectMatchesLiteRtAllIsas(b.Finish(), {RandomF32({1, 7, 8, 6}, 6)});
}

TEST(Conv2D, TanhFusedActivationIsIgnoredLikeLiteRt) {
  // LiteRT's conv applies only clamp activations; a fused TANH leaves the
  // output untouched (CalculateActivationRange), values above 1 included.
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 5, 5, 3});
  b.Output(b.Conv2D(x, b.ConstF32("w", {2, 3, 3, 3}, std::vector<float>(54, 0.5f)), b.ConstF32("b", {2}, {0.5f, -2.0f}),
                    tfl::Padding_SAME, 1, 1, tfl::ActivationFunctionType_TANH));
  const ir::Model model = b.Finish();
  const std::vector<npy::Array> inputs = {RandomF32({1, 5, 5, 3}, 7, 0.0f, 1.0f)};
  ExpectMatchesLiteRtAllIsas(model, inputs);
  float peak = 0;
  for (float v : ValuesOf<float>(RunOurs(model, inputs)[0])) peak = std::max(peak, std::fabs(v));
  EXPECT_GT(peak, 1.5f);
}

TEST(Conv2D, MissingBiasIsZeroBias) {
  // LiteRT.js cannot run a CONV_2D without bias ("Tensor at index 2 was
  // optional but was expected"), so the omitted bias is checked against an
  // explicit zero bias, which the other tests compare with LiteRT.js.
  auto model = [](bool with_bias) {
    GraphBuilder b;
    const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 9, 8, 6});
    const int w1 = RandomConst(b, "w1", {10, 3, 3, 6}, 1), w2 = RandomConst(b, "w2", {40, 1, 1, 6}, 2);
    b.Output(b.Conv2D(x, w1, with_bias ? b.ConstF32("b1", {10}, std::vector<float>(10, 0.0f)) : kNoInput,
                      tfl::Padding_SAME, 2, 1, tfl::ActivationFunctionType_RELU));
    b.Output(b.Conv2D(x, w2, with_bias ? b.ConstF32("b2", {40}, std::vector<float>(40, 0.0f)) : kNoInput,
                      tfl::Padding_VALID, 1, 1));
    return b.Finish();
  };
  const std::vector<npy::Array> in = {RandomF32({1, 9, 8, 6}, 3)};
  IsaGuard guard;
  for (conv::Isa isa : AvailableIsas()) {
    SCOPED_TRACE(conv::IsaName(conv::SetIsaForTesting(isa)));
    const auto without = RunOurs(model(false), in), with = RunOurs(model(true), in);
    for (size_t i = 0; i < with.size(); ++i) EXPECT_TRUE(without[i].data == with[i].data) << "output " << i;
  }
}

TEST(Conv2D, HandComputedSamePadding) {
  // 3x3 ones over 1..9 with SAME padding: each output sums its neighbourhood.
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 3, 3, 1});
  b.Output(b.Conv2D(x, b.ConstF32("w", {1, 3, 3, 1}, std::vector<float>(9, 1.0f)), b.ConstF32("b", {1}, {0.5f}),
                    tfl::Padding_SAME, 1, 1));
  ExpectOursAllIsas(b.Finish(), {F32({1, 3, 3, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9})}, 0,
                    {12.5f, 21.5f, 16.5f, 27.5f, 45.5f, 33.5f, 24.5f, 39.5f, 28.5f});
}

TEST(Conv2D, RejectsInt8Weights) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 4, 4, 2});
  const int w = b.ConstInt8("w", {3, 1, 1, 2}, {1, 2, 3, 4, 5, 6}, 0.1f, 0);
  b.Output(b.Conv2D(x, w, kNoInput, tfl::Padding_SAME, 1, 1));
  ExpectInterpreterRefuses(b.Finish());
}

}  // namespace
}  // namespace gpuclean::testing::convt
