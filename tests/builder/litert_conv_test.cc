// ctest-labels: litert
// Spatial and matrix op cases: convolutions (grouped, depthwise, dilated,
// transposed), fully connected, batch matmul, pooling, resizes, depth/space
// shuffles and the MediaPipe custom ops. Convolutions and pooling are checked
// against a direct reference that uses ir::ComputeWindowPadding, which pins
// down LiteRT's SAME padding split, not just the output shape.
#include <bit>

#include "builder/litert_case.h"
#include "support/tflite_names.h"

namespace gpuclean::testing {
namespace {

using ::gpuclean::testing::tflite_names::kRelu;
using ::gpuclean::testing::tflite_names::kRelu6;
using ::gpuclean::testing::tflite_names::kSame;
using ::gpuclean::testing::tflite_names::kValid;

struct ConvGeometry {
  Shape input, filter, output;
  tfl::Padding padding;
  int stride_h, stride_w, dilation_h = 1, dilation_w = 1;
  bool depthwise = false;
};

// Direct NHWC convolution. Regular filters are [O, KH, KW, I/groups];
// depthwise filters [1, KH, KW, I * multiplier].
std::vector<float> ReferenceConv(const ConvGeometry& g, const std::vector<float>& x, const std::vector<float>& w,
                                 const std::vector<float>& bias) {
  const int32_t in_c = g.input[3], out_c = g.output[3];
  const int32_t kh = g.filter[1], kw = g.filter[2];
  const int32_t pad_top =
      ir::ComputeWindowPadding(g.padding, g.input[1], kh, g.stride_h, g.dilation_h, g.output[1]).before;
  const int32_t pad_left =
      ir::ComputeWindowPadding(g.padding, g.input[2], kw, g.stride_w, g.dilation_w, g.output[2]).before;
  const int32_t group_in = g.depthwise ? 1 : g.filter[3];
  const int32_t groups = g.depthwise ? in_c : in_c / group_in;
  const int32_t out_per_group = out_c / groups;
  std::vector<float> out;
  ForEachIndex(g.output, [&](const std::vector<int32_t>& o) {
    const int32_t oc = o[3], group = oc / out_per_group;
    double sum = bias.empty() ? 0.0 : bias[oc];
    for (int32_t fy = 0; fy < kh; ++fy)
      for (int32_t fx = 0; fx < kw; ++fx) {
        const int32_t iy = o[1] * g.stride_h - pad_top + fy * g.dilation_h;
        const int32_t ix = o[2] * g.stride_w - pad_left + fx * g.dilation_w;
        if (iy < 0 || iy >= g.input[1] || ix < 0 || ix >= g.input[2]) continue;
        for (int32_t i = 0; i < group_in; ++i) {
          const int32_t ic = group * group_in + i;
          const float wv = g.depthwise ? w[Offset(g.filter, {0, fy, fx, oc})] : w[Offset(g.filter, {oc, fy, fx, i})];
          sum += static_cast<double>(x[Offset(g.input, {o[0], iy, ix, ic})]) * wv;
        }
      }
    out.push_back(static_cast<float>(sum));
  });
  return out;
}

// A convolution case whose filter and bias are deterministic constants.
OpCase ConvCase(std::string name, ConvGeometry g, bool with_bias, tfl::ActivationFunctionType act) {
  OpCase c;
  c.name = std::move(name);
  const std::vector<float> w = Ramp(Elements(g.filter), 11, -0.5f, 0.5f);
  const std::vector<float> bias = with_bias ? Ramp(g.output[3], 12) : std::vector<float>{};
  c.build = [g, w, bias, act] {
    return OneOp({g.input}, [&](GraphBuilder& b, const std::vector<int>& in) {
      const int filter = b.ConstF32("filter", g.filter, w);
      const int bias_tensor = bias.empty() ? builder::kNoInput : b.ConstF32("bias", {g.output[3]}, bias);
      const int out = g.depthwise ? b.DepthwiseConv2D(in[0], filter, bias_tensor, g.padding, g.stride_w, g.stride_h,
                                                      act, g.dilation_w, g.dilation_h)
                                  : b.Conv2D(in[0], filter, bias_tensor, g.padding, g.stride_w, g.stride_h, act,
                                             g.dilation_w, g.dilation_h);
      EXPECT_EQ(b.shape(out), g.output);
      return std::vector<int>{out};
    });
  };
  c.check = [g, w, bias, act](const Arrays& in, const Arrays& out) {
    std::vector<float> want = ReferenceConv(g, Floats(in[0]), w, bias);
    for (float& v : want) {
      if (act == kRelu) v = std::max(v, 0.0f);
      if (act == kRelu6) v = std::clamp(v, 0.0f, 6.0f);
    }
    ExpectFloatsNear(Floats(out[0]), want, 1e-4f);
  };
  return c;
}

OpCase PoolCase(std::string name, bool max, Shape input, tfl::Padding padding, int stride, int window, Shape output) {
  OpCase c;
  c.name = std::move(name);
  c.build = [=] {
    return OneOp({input}, [&](GraphBuilder& b, const std::vector<int>& in) {
      const int out = max ? b.MaxPool2D(in[0], padding, stride, stride, window, window)
                          : b.AveragePool2D(in[0], padding, stride, stride, window, window);
      EXPECT_EQ(b.shape(out), output);
      return std::vector<int>{out};
    });
  };
  // Windows cover only real elements: padding takes no part in max or mean.
  c.check = [=](const Arrays& in, const Arrays& out) {
    const std::vector<float> x = Floats(in[0]);
    const int32_t top = ir::ComputeWindowPadding(padding, input[1], window, stride, 1, output[1]).before;
    const int32_t left = ir::ComputeWindowPadding(padding, input[2], window, stride, 1, output[2]).before;
    std::vector<float> want;
    ForEachIndex(output, [&](const std::vector<int32_t>& o) {
      float best = -1e30f, sum = 0;
      int count = 0;
      for (int32_t fy = 0; fy < window; ++fy)
        for (int32_t fx = 0; fx < window; ++fx) {
          const int32_t iy = o[1] * stride - top + fy, ix = o[2] * stride - left + fx;
          if (iy < 0 || iy >= input[1] || ix < 0 || ix >= input[2]) continue;
          const float v = x[Offset(input, {o[0], iy, ix, o[3]})];
          best = std::max(best, v);
          sum += v;
          ++count;
        }
      want.push_back(max ? best : sum / static_cast<float>(count));
    });
    ExpectFloatsNear(Floats(out[0]), want, 1e-5f);
  };
  return c;
}

OpCase ResizeCase(std::string name, bool bilinear, bool align_corners, bool half_pixel_centers) {
  OpCase c;
  c.name = std::move(name);
  c.build = [=] {
    return OneOp({{1, 4, 4, 2}}, [&](GraphBuilder& b, const std::vector<int>& in) {
      const int out = bilinear ? b.ResizeBilinear(in[0], 8, 6, align_corners, half_pixel_centers)
                               : b.ResizeNearestNeighbor(in[0], 8, 6, align_corners, half_pixel_centers);
      return std::vector<int>{out};
    });
  };
  return c;
}

// DEPTH_TO_SPACE moves channel block (by, bx) to pixel (y*b + by, x*b + bx).
void CheckDepthToSpace(const npy::Array& deep, const npy::Array& wide, int32_t block) {
  const Shape ds(deep.shape.begin(), deep.shape.end()), ws(wide.shape.begin(), wide.shape.end());
  const std::vector<float> d = Floats(deep), w = Floats(wide);
  ForEachIndex(ws, [&](const std::vector<int32_t>& i) {
    const int32_t by = i[1] % block, bx = i[2] % block;
    const int32_t channel = (by * block + bx) * ws[3] + i[3];
    EXPECT_EQ(w[Offset(ws, i)], d[Offset(ds, {i[0], i[1] / block, i[2] / block, channel})]);
  });
}

}  // namespace

std::vector<OpCase> ConvCases() {
  std::vector<OpCase> cases;
  cases.push_back(
      ConvCase("CONV_2D_same_stride2_relu", {{1, 7, 7, 3}, {4, 3, 3, 3}, {1, 4, 4, 4}, kSame, 2, 2}, true, kRelu));
  cases.push_back(ConvCase("CONV_2D_same_stride2_even_input", {{1, 8, 8, 2}, {3, 3, 3, 2}, {1, 4, 4, 3}, kSame, 2, 2},
                           true, tfl::ActivationFunctionType_NONE));
  cases.push_back(ConvCase("CONV_2D_valid_dilated_no_bias",
                           {{1, 9, 9, 2}, {3, 3, 3, 2}, {1, 5, 5, 3}, kValid, 1, 1, 2, 2}, false,
                           tfl::ActivationFunctionType_NONE));
  cases.push_back(ConvCase("CONV_2D_grouped", {{1, 6, 6, 4}, {6, 3, 3, 2}, {1, 6, 6, 6}, kSame, 1, 1}, true,
                           tfl::ActivationFunctionType_NONE));
  cases.push_back(ConvCase("DEPTHWISE_CONV_2D_multiplier2_dilated",
                           {{1, 8, 8, 3}, {1, 3, 3, 6}, {1, 8, 8, 6}, kSame, 1, 1, 2, 2, true}, true,
                           tfl::ActivationFunctionType_NONE));
  cases.push_back(ConvCase("DEPTHWISE_CONV_2D_valid_stride2_relu6_no_bias",
                           {{1, 9, 9, 4}, {1, 3, 3, 4}, {1, 4, 4, 4}, kValid, 2, 2, 1, 1, true}, false, kRelu6));

  OpCase transpose_conv;
  transpose_conv.name = "TRANSPOSE_CONV_same_stride2_bias";
  transpose_conv.build = [] {
    return OneOp({{1, 4, 4, 3}}, [](GraphBuilder& b, const std::vector<int>& in) {
      const int w = b.ConstF32("weights", {2, 3, 3, 3}, Ramp(54, 21, -0.5f, 0.5f));
      const int bias = b.ConstF32("bias", {2}, {0.25f, -0.5f});
      return std::vector<int>{b.TransposeConv(in[0], w, bias, {1, 8, 8, 2}, kSame, 2, 2)};
    });
  };
  cases.push_back(transpose_conv);

  OpCase transpose_conv_valid;
  transpose_conv_valid.name = "TRANSPOSE_CONV_valid_no_bias";
  transpose_conv_valid.build = [] {
    return OneOp({{1, 3, 3, 2}}, [](GraphBuilder& b, const std::vector<int>& in) {
      const int w = b.ConstF32("weights", {2, 2, 2, 2}, Ramp(16, 22, -0.5f, 0.5f));
      return std::vector<int>{b.TransposeConv(in[0], w, builder::kNoInput, {1, 6, 6, 2}, kValid, 2, 2)};
    });
  };
  cases.push_back(transpose_conv_valid);

  OpCase fc_keep;
  fc_keep.name = "FULLY_CONNECTED_keep_num_dims";
  fc_keep.build = [] {
    return OneOp({{2, 3, 8}}, [](GraphBuilder& b, const std::vector<int>& in) {
      const int w = b.ConstF32("weights", {5, 8}, Ramp(40, 31, -0.5f, 0.5f));
      const int bias = b.ConstF32("bias", {5}, Ramp(5, 32));
      return std::vector<int>{b.FullyConnected(in[0], w, bias, kRelu, /*keep_num_dims=*/true)};
    });
  };
  cases.push_back(fc_keep);

  OpCase fc_flat;
  fc_flat.name = "FULLY_CONNECTED_flatten_no_bias";
  fc_flat.build = [] {
    return OneOp({{2, 3, 4}}, [](GraphBuilder& b, const std::vector<int>& in) {
      const int w = b.ConstF32("weights", {6, 12}, Ramp(72, 33, -0.5f, 0.5f));
      return std::vector<int>{b.FullyConnected(in[0], w, builder::kNoInput)};
    });
  };
  fc_flat.check = [](const Arrays& in, const Arrays& out) {
    const std::vector<float> x = Floats(in[0]), w = Ramp(72, 33, -0.5f, 0.5f);
    std::vector<float> want;
    for (int r = 0; r < 2; ++r)
      for (int o = 0; o < 6; ++o) {
        double sum = 0;
        for (int k = 0; k < 12; ++k) sum += static_cast<double>(x[r * 12 + k]) * w[o * 12 + k];
        want.push_back(static_cast<float>(sum));
      }
    ExpectFloatsNear(Floats(out[0]), want, 1e-4f);
  };
  cases.push_back(fc_flat);

  OpCase matmul_adj;
  matmul_adj.name = "BATCH_MATMUL_adj_x_adj_y_broadcast";
  matmul_adj.build = [] {
    return OneOp({{2, 3, 4}, {1, 5, 3}}, [](GraphBuilder& b, const std::vector<int>& in) {
      return std::vector<int>{b.BatchMatMul(in[0], in[1], /*adj_x=*/true, /*adj_y=*/true)};
    });
  };
  matmul_adj.check = [](const Arrays& in, const Arrays& out) {
    const std::vector<float> a = Floats(in[0]), b = Floats(in[1]);
    std::vector<float> want;
    ForEachIndex({2, 4, 5}, [&](const std::vector<int32_t>& i) {
      double sum = 0;  // out[n, m, p] = sum_k a[n, k, m] * b[0, p, k]
      for (int32_t k = 0; k < 3; ++k)
        sum += static_cast<double>(a[Offset({2, 3, 4}, {i[0], k, i[1]})]) * b[Offset({1, 5, 3}, {0, i[2], k})];
      want.push_back(static_cast<float>(sum));
    });
    ExpectFloatsNear(Floats(out[0]), want, 1e-4f);
  };
  cases.push_back(matmul_adj);

  OpCase matmul_rank2;
  matmul_rank2.name = "BATCH_MATMUL_rank2_rhs";
  matmul_rank2.build = [] {
    return OneOp({{3, 2, 4}, {4, 6}}, [](GraphBuilder& b, const std::vector<int>& in) {
      return std::vector<int>{b.BatchMatMul(in[0], in[1])};
    });
  };
  cases.push_back(matmul_rank2);

  cases.push_back(PoolCase("MAX_POOL_2D_valid_2x2_stride2", true, {1, 5, 5, 2}, kValid, 2, 2, {1, 2, 2, 2}));
  cases.push_back(PoolCase("MAX_POOL_2D_same_3x3_stride2", true, {1, 6, 6, 2}, kSame, 2, 3, {1, 3, 3, 2}));
  cases.push_back(PoolCase("AVERAGE_POOL_2D_same_3x3_stride2", false, {1, 7, 7, 3}, kSame, 2, 3, {1, 4, 4, 3}));
  cases.push_back(PoolCase("AVERAGE_POOL_2D_valid_global", false, {1, 4, 4, 3}, kValid, 1, 4, {1, 1, 1, 3}));

  cases.push_back(ResizeCase("RESIZE_BILINEAR_half_pixel", true, false, true));
  cases.push_back(ResizeCase("RESIZE_BILINEAR_align_corners", true, true, false));
  cases.push_back(ResizeCase("RESIZE_NEAREST_NEIGHBOR_plain", false, false, false));
  cases.push_back(ResizeCase("RESIZE_NEAREST_NEIGHBOR_half_pixel", false, false, true));

  OpCase depth_to_space;
  depth_to_space.name = "DEPTH_TO_SPACE_block2";
  depth_to_space.build = [] {
    return OneOp({{1, 2, 3, 8}}, [](GraphBuilder& b, const std::vector<int>& in) {
      return std::vector<int>{b.DepthToSpace(in[0], 2)};
    });
  };
  depth_to_space.check = [](const Arrays& in, const Arrays& out) { CheckDepthToSpace(in[0], out[0], 2); };
  cases.push_back(depth_to_space);

  OpCase space_to_depth;
  space_to_depth.name = "SPACE_TO_DEPTH_block2";
  space_to_depth.build = [] {
    return OneOp({{1, 4, 6, 2}}, [](GraphBuilder& b, const std::vector<int>& in) {
      return std::vector<int>{b.SpaceToDepth(in[0], 2)};
    });
  };
  space_to_depth.check = [](const Arrays& in, const Arrays& out) { CheckDepthToSpace(out[0], in[0], 2); };
  cases.push_back(space_to_depth);

  // ---- MediaPipe custom ops
  for (auto [padding, kernel, size] : {std::tuple{kSame, 2, 8}, std::tuple{kValid, 3, 9}}) {
    OpCase c;
    c.name = padding == kSame ? "Convolution2DTransposeBias_same_2x2" : "Convolution2DTransposeBias_valid_3x3";
    c.build = [padding, kernel, size] {
      return OneOp({{1, 4, 4, 3}}, [&](GraphBuilder& b, const std::vector<int>& in) {
        const int w = b.ConstF32("weights", {2, kernel, kernel, 3}, Ramp(2 * kernel * kernel * 3, 41, -0.5f, 0.5f));
        const int bias = b.ConstF32("bias", {2}, {0.5f, -0.25f});
        const int out = b.Convolution2DTransposeBias(in[0], w, bias, padding, 2, 2);
        EXPECT_EQ(b.shape(out), (Shape{1, size, size, 2}));
        return std::vector<int>{out};
      });
    };
    cases.push_back(c);
  }

  OpCase argmax_pool;
  argmax_pool.name = "MaxPoolingWithArgmax2D_2x2_stride2";
  argmax_pool.build = [] {
    return OneOp({{1, 4, 4, 2}}, [](GraphBuilder& b, const std::vector<int>& in) {
      auto [values, indices] = b.MaxPoolingWithArgmax2D(in[0], kSame, 2, 2, 2, 2);
      return std::vector<int>{values, indices};
    });
  };
  // LiteRT.js runs this op through XNNPACK, which does not follow MediaPipe's
  // reference kernel for the indices: instead of the float y * filter_w + x
  // + 0.1, it stores the uint32 position inside the window, column-major
  // (x * filter_h + y), in the float tensor's bits. MaxUnpooling2D in the
  // same runtime reads them back that way, so pairs of the two still agree.
  argmax_pool.check = [](const Arrays& in, const Arrays& out) {
    const std::vector<float> x = Floats(in[0]), values = Floats(out[0]), indices = Floats(out[1]);
    ForEachIndex({1, 2, 2, 2}, [&](const std::vector<int32_t>& o) {
      const int64_t at = Offset({1, 2, 2, 2}, o);
      const uint32_t window_index = std::bit_cast<uint32_t>(indices[at]);
      ASSERT_LT(window_index, 4u);
      const int32_t iy = o[1] * 2 + static_cast<int32_t>(window_index % 2);
      const int32_t ix = o[2] * 2 + static_cast<int32_t>(window_index / 2);
      EXPECT_EQ(values[at], x[Offset({1, 4, 4, 2}, {0, iy, ix, o[3]})]);
    });
  };
  cases.push_back(argmax_pool);

  OpCase unpool;
  unpool.name = "MaxUnpooling2D_after_argmax_pool";
  unpool.build = [] {
    return OneOp({{1, 4, 4, 2}}, [](GraphBuilder& b, const std::vector<int>& in) {
      auto [values, indices] = b.MaxPoolingWithArgmax2D(in[0], kSame, 2, 2, 2, 2);
      // VALID: XNNPACK logs "invalid padding mode" for SAME unpooling (and then
      // ignores the padding), which the harness rightly counts as an error.
      return std::vector<int>{b.MaxUnpooling2D(values, indices, kValid, 2, 2, 2, 2)};
    });
  };
  // Unpooling puts each window's maximum back where it was, zeros elsewhere.
  unpool.check = [](const Arrays& in, const Arrays& out) {
    const std::vector<float> x = Floats(in[0]), got = Floats(out[0]);
    ForEachIndex({1, 4, 4, 2}, [&](const std::vector<int32_t>& i) {
      float best = -1e30f;
      for (int32_t dy = 0; dy < 2; ++dy)
        for (int32_t dx = 0; dx < 2; ++dx)
          best = std::max(best, x[Offset({1, 4, 4, 2}, {0, i[1] / 2 * 2 + dy, i[2] / 2 * 2 + dx, i[3]})]);
      const float v = x[Offset({1, 4, 4, 2}, i)];
      EXPECT_EQ(got[Offset({1, 4, 4, 2}, i)], v == best ? v : 0.0f);
    });
  };
  cases.push_back(unpool);
  return cases;
}

}  // namespace gpuclean::testing
