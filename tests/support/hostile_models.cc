#include "support/hostile_models.h"

#include <cstring>
#include <functional>
#include <limits>

#include "gpuclean/builder.h"
#include "gpuclean/shapes.h"

namespace gpuclean::testing {
namespace {

using builder::GraphBuilder;
using Shape = std::vector<int32_t>;
constexpr auto kF32 = tfl::TensorType_FLOAT32;
constexpr auto kI32 = tfl::TensorType_INT32;
constexpr int32_t kInt32Max = std::numeric_limits<int32_t>::max();

ir::Model Wrap(ir::Subgraph graph) {
  ir::Model model;
  model.description = "gpuclean hostile corpus";
  model.subgraphs.push_back(std::move(graph));
  return model;
}

// A valid graph from `build`, then broken by `mutate`.
HostileModel Make(std::string name, Hostility hostility, std::string expect,
                  const std::function<void(GraphBuilder&)>& build,
                  const std::function<void(ir::Subgraph&)>& mutate = {}) {
  GraphBuilder b;
  build(b);
  ir::Subgraph g = b.Release();
  if (mutate) mutate(g);
  return {std::move(name), hostility, std::move(expect), Wrap(std::move(g)), {}};
}

void SetInts(ir::Subgraph& g, int tensor, const std::vector<int32_t>& values) {
  g.tensors[tensor].data = Bytes::FromValues(std::span<const int32_t>(values));
  g.tensors[tensor].shape = {static_cast<int32_t>(values.size())};
}

int ConvInput(GraphBuilder& b) { return b.Input("x", kF32, {1, 8, 8, 4}); }

// x [1,8,8,4] -> CONV_2D 3x3 -> [1,8,8,8].
void Conv(GraphBuilder& b) {
  const int x = ConvInput(b);
  const int w = b.ConstF32("w", {8, 3, 3, 4}, std::vector<float>(8 * 3 * 3 * 4, 0.1f));
  const int bias = b.ConstF32("bias", {8}, std::vector<float>(8, 0.0f));
  b.Output(b.Conv2D(x, w, bias, tfl::Padding_SAME, 1, 1));
}

tfl::Conv2DOptionsT& ConvOptions(ir::Subgraph& g) { return *g.ops[0].options.AsConv2DOptions(); }

// The input of op `op` at position `k`.
int InputOf(const ir::Subgraph& g, int op, int k) { return g.ops[op].inputs[k]; }

npy::Array Ints(std::vector<int64_t> shape, const std::vector<int32_t>& values) {
  npy::Array a;
  a.dtype = kI32;
  a.shape = std::move(shape);
  a.data.resize(values.size() * sizeof(int32_t));
  std::memcpy(a.data.data(), values.data(), a.data.size());
  return a;
}

npy::Array Floats(std::vector<int64_t> shape, const std::vector<float>& values) {
  npy::Array a;
  a.dtype = kF32;
  a.shape = std::move(shape);
  a.data.resize(values.size() * sizeof(float));
  std::memcpy(a.data.data(), values.data(), a.data.size());
  return a;
}

void AddInvalid(std::vector<HostileModel>& corpus) {
  const auto invalid = Hostility::kInvalid;
  corpus.push_back(Make("conv_stride_zero", invalid, "strides must be >= 1", Conv,
                        [](ir::Subgraph& g) { ConvOptions(g).stride_w = 0; }));
  corpus.push_back(Make("conv_dilation_zero", invalid, "dilations must be >= 1", Conv,
                        [](ir::Subgraph& g) { ConvOptions(g).dilation_h_factor = 0; }));
  corpus.push_back(Make("conv_dilation_2pow30", invalid, "spans more than 2^31", Conv,
                        [](ir::Subgraph& g) { ConvOptions(g).dilation_w_factor = 1 << 30; }));
  corpus.push_back(Make("conv_channels_disagree", invalid, "not a multiple", Conv, [](ir::Subgraph& g) {
    g.tensors[g.inputs[0]].shape = {1, 8, 8, 5};
  }));
  corpus.push_back(Make("conv_unknown_padding", invalid, "unknown padding", Conv,
                        [](ir::Subgraph& g) { ConvOptions(g).padding = static_cast<tfl::Padding>(7); }));
  corpus.push_back(Make(
      "pool_window_zero", invalid, "window must be at least",
      [](GraphBuilder& b) { b.Output(b.MaxPool2D(ConvInput(b), tfl::Padding_VALID, 2, 2, 2, 2)); },
      [](ir::Subgraph& g) { g.ops[0].options.AsPool2DOptions()->filter_width = 0; }));
  corpus.push_back(Make(
      "pool_stride_zero", invalid, "strides must be >= 1",
      [](GraphBuilder& b) { b.Output(b.AveragePool2D(ConvInput(b), tfl::Padding_SAME, 2, 2, 2, 2)); },
      [](ir::Subgraph& g) { g.ops[0].options.AsPool2DOptions()->stride_h = 0; }));
  corpus.push_back(Make(
      "reshape_product_mismatch", invalid, "holds 255 elements",
      [](GraphBuilder& b) {
        b.Output(b.Reshape(ConvInput(b), {1, 256}));
      },
      [](ir::Subgraph& g) {
        SetInts(g, InputOf(g, 0, 1), {1, 255});
        g.ops[0].options.AsReshapeOptions()->new_shape = {1, 255};
      }));
  corpus.push_back(Make(
      "reshape_overflow", invalid, "overflows",
      [](GraphBuilder& b) {
        b.Output(b.Reshape(ConvInput(b), {1, 256}));
      },
      [](ir::Subgraph& g) {
        SetInts(g, InputOf(g, 0, 1), {kInt32Max, kInt32Max, kInt32Max});
        g.ops[0].options.AsReshapeOptions()->new_shape = {kInt32Max, kInt32Max, kInt32Max};
      }));
  corpus.push_back(Make(
      "concat_axis_out_of_range", invalid, "axis 7 is out of range",
      [](GraphBuilder& b) {
        const int x = ConvInput(b);
        b.Output(b.Concatenation({x, x}, 3));
      },
      [](ir::Subgraph& g) { g.ops[0].options.AsConcatenationOptions()->axis = 7; }));
  corpus.push_back(Make(
      "mean_axis_out_of_range", invalid, "axis 9 is out of range",
      [](GraphBuilder& b) {
        b.Output(b.Mean(ConvInput(b), {1, 2}, true));
      },
      [](ir::Subgraph& g) {
        SetInts(g, InputOf(g, 0, 1), {1, 9});
      }));
  corpus.push_back(Make(
      "pad_negative", invalid, "negative",
      [](GraphBuilder& b) {
        b.Output(b.Pad(ConvInput(b), {{0, 0}, {1, 1}, {1, 1}, {0, 0}}));
      },
      [](ir::Subgraph& g) {
        SetInts(g, InputOf(g, 0, 1), {0, 0, -3, 1, 1, 1, 0, 0});
        g.tensors[InputOf(g, 0, 1)].shape = {4, 2};
      }));
  corpus.push_back(Make(
      "transpose_perm_repeats", invalid, "is not a permutation",
      [](GraphBuilder& b) {
        b.Output(b.Transpose(ConvInput(b), {0, 3, 1, 2}));
      },
      [](ir::Subgraph& g) {
        SetInts(g, InputOf(g, 0, 1), {0, 0, 1, 2});
      }));
  corpus.push_back(Make(
      "strided_slice_stride_zero", invalid, "stride",
      [](GraphBuilder& b) {
        b.Output(b.StridedSlice(ConvInput(b), {0, 0, 0, 0}, {1, 4, 4, 4}, {1, 1, 1, 1}));
      },
      [](ir::Subgraph& g) {
        SetInts(g, InputOf(g, 0, 3), {1, 0, 1, 1});
      }));
  corpus.push_back(Make(
      "split_into_zero", invalid, "num_splits must be >= 1",
      [](GraphBuilder& b) {
        for (int out : b.Split(ConvInput(b), 3, 2)) b.Output(out);
      },
      [](ir::Subgraph& g) { g.ops[0].options.AsSplitOptions()->num_splits = 0; }));
  corpus.push_back(Make(
      "gather_axis_out_of_range", invalid, "out of range",
      [](GraphBuilder& b) {
        b.Output(b.Gather(ConvInput(b), b.ConstI32("idx", {2}, {0, 1}), 1));
      },
      [](ir::Subgraph& g) { g.ops[0].options.AsGatherOptions()->axis = 9; }));
  corpus.push_back(Make(
      "space_to_depth_block_zero", invalid, "block_size must be >= 1",
      [](GraphBuilder& b) { b.Output(b.SpaceToDepth(ConvInput(b), 2)); },
      [](ir::Subgraph& g) { g.ops[0].options.AsSpaceToDepthOptions()->block_size = 0; }));
  corpus.push_back(Make(
      "depth_to_space_block_2pow16", invalid, "do not divide",
      [](GraphBuilder& b) { b.Output(b.DepthToSpace(ConvInput(b), 2)); },
      [](ir::Subgraph& g) { g.ops[0].options.AsDepthToSpaceOptions()->block_size = 1 << 16; }));
  corpus.push_back(Make(
      "resize_negative", invalid, "size must be positive",
      [](GraphBuilder& b) { b.Output(b.ResizeBilinear(ConvInput(b), 16, 16)); },
      [](ir::Subgraph& g) {
        SetInts(g, InputOf(g, 0, 1), {-4, 16});
      }));
  corpus.push_back(Make(
      "tile_overflow", invalid, "not a valid dimension",
      [](GraphBuilder& b) {
        b.Output(b.Tile(ConvInput(b), {1, 1, 1, 1}));
      },
      [](ir::Subgraph& g) {
        SetInts(g, InputOf(g, 0, 1), {1, kInt32Max, 1, 1});
      }));
  corpus.push_back(Make(
      "batch_matmul_depth_mismatch", invalid, "contracted dimensions differ",
      [](GraphBuilder& b) {
        const int a = b.Input("a", kF32, {2, 3, 4});
        const int c = b.Input("c", kF32, {2, 4, 5});
        b.Output(b.BatchMatMul(a, c));
      },
      [](ir::Subgraph& g) {
        g.tensors[g.inputs[1]].shape = {2, 6, 5};
      }));
  // MediaPipe's transposed convolution: output = stride * (in - 1) + filter.
  corpus.push_back(Make(
      "mediapipe_transpose_conv_huge_stride", invalid, "not a valid dimension",
      [](GraphBuilder& b) {
        const int x = ConvInput(b);
        const int w = b.ConstF32("w", {2, 3, 3, 4}, std::vector<float>(2 * 3 * 3 * 4, 0.1f));
        const int bias = b.ConstF32("bias", {2}, {0.0f, 0.0f});
        b.Output(b.Convolution2DTransposeBias(x, w, bias, tfl::Padding_SAME, 2, 2));
      },
      [](ir::Subgraph& g) {
        g.ops[0].custom_options =
            ir::EncodeMediaPipeOptions(ir::MediaPipeTransposeConvOptions{tfl::Padding_SAME, kInt32Max, kInt32Max});
      }));
  corpus.push_back(Make(
      "mediapipe_unpooling_huge_filter", invalid, "not a valid dimension",
      [](GraphBuilder& b) {
        const auto [values, indices] = b.MaxPoolingWithArgmax2D(ConvInput(b), tfl::Padding_SAME, 2, 2, 2, 2);
        b.Output(b.MaxUnpooling2D(values, indices, tfl::Padding_SAME, 2, 2, 2, 2));
      },
      [](ir::Subgraph& g) {
        ir::MediaPipePoolOptions o{tfl::Padding_SAME, 2, 2, 1 << 30, 1 << 30};
        g.ops[1].custom_options = ir::EncodeMediaPipeOptions(o);
      }));
  corpus.push_back(Make("output_written_by_no_op", invalid, "written by no op", Conv, [](ir::Subgraph& g) {
    ir::Tensor ghost;
    ghost.name = "ghost";
    ghost.shape = {2, 2};
    g.outputs.push_back(g.AddTensor(ghost));
  }));
  corpus.push_back(Make("input_written_by_no_op", invalid, "which no op writes", Conv, [](ir::Subgraph& g) {
    ir::Tensor ghost;
    ghost.name = "ghost";
    ghost.shape = {8};
    g.ops[0].inputs[2] = g.AddTensor(ghost);
  }));
  // The name holds a newline and a terminal escape: the refusal quoting it
  // must still be one line.
  corpus.push_back(Make("tensor_name_with_newline", invalid, "ghost?line two?[31m", Conv, [](ir::Subgraph& g) {
    ir::Tensor ghost;
    ghost.name = "ghost\nline two\x1b[31m";
    ghost.shape = {2, 2};
    g.outputs.push_back(g.AddTensor(ghost));
  }));
  corpus.push_back(Make(
      "cycle", invalid, "cycle", [](GraphBuilder& b) { b.Output(b.Relu(b.Relu(ConvInput(b)))); },
      [](ir::Subgraph& g) { g.ops[0].inputs[0] = g.ops[1].outputs[0]; }));
  corpus.push_back(Make("constant_shape_over_small_buffer", invalid, "holds 16 bytes", Conv, [](ir::Subgraph& g) {
    const int t = InputOf(g, 0, 2);
    g.tensors[t].data = Bytes::Own(std::vector<uint8_t>(16, 0));
    g.tensors[t].shape = {kInt32Max};
  }));
}

void AddTooBig(std::vector<HostileModel>& corpus) {
  const auto big = Hostility::kTooBig;
  corpus.push_back(Make(
      "broadcast_to_1e12", big, "memory limit",
      [](GraphBuilder& b) {
        b.Output(b.BroadcastTo(b.Input("x", kF32, {1, 1}), {1000, 1000}));
      },
      [](ir::Subgraph& g) {
        SetInts(g, InputOf(g, 0, 1), {1000000, 1000000});
        g.tensors[g.outputs[0]].shape = {1000000, 1000000};
      }));
  corpus.push_back(Make(
      "tile_1e12", big, "memory limit",
      [](GraphBuilder& b) {
        b.Output(b.Tile(b.Input("x", kF32, {1, 1}), {2, 2}));
      },
      [](ir::Subgraph& g) {
        SetInts(g, InputOf(g, 0, 1), {1000000, 1000000});
        g.tensors[g.outputs[0]].shape = {1000000, 1000000};
      }));
  corpus.push_back(Make(
      "input_2pow31", big, "memory limit",
      [](GraphBuilder& b) {
        const int x = b.Input("x", kF32, {1, 16});
        b.Output(b.Relu(x));
      },
      [](ir::Subgraph& g) {
        g.tensors[g.inputs[0]].shape = {1, kInt32Max};
        g.tensors[g.outputs[0]].shape = {1, kInt32Max};
      }));
  corpus.push_back(Make(
      "resize_100000", big, "memory limit", [](GraphBuilder& b) { b.Output(b.ResizeBilinear(ConvInput(b), 16, 16)); },
      [](ir::Subgraph& g) {
        SetInts(g, InputOf(g, 0, 1), {100000, 100000});
        g.tensors[g.outputs[0]].shape = {1, 100000, 100000, 4};
      }));
}

void AddRuntimeValues(std::vector<HostileModel>& corpus) {
  const auto runtime = Hostility::kRuntimeValues;
  HostileModel gather =
      Make("gather_runtime_index_out_of_range", runtime, "index 1000 is outside", [](GraphBuilder& b) {
        const int params = b.ConstF32("table", {10, 4}, std::vector<float>(40, 1.0f));
        b.Output(b.Gather(params, b.Input("ids", kI32, {3}), 0));
      });
  gather.inputs = {Ints({3}, {0, 5, 1000})};
  corpus.push_back(std::move(gather));
  HostileModel negative = Make("gather_runtime_index_negative", runtime, "index -7 is outside", [](GraphBuilder& b) {
    const int params = b.ConstF32("table", {10, 4}, std::vector<float>(40, 1.0f));
    b.Output(b.Gather(params, b.Input("ids", kI32, {2}), 0));
  });
  negative.inputs = {Ints({2}, {-7, 1})};
  corpus.push_back(std::move(negative));
  HostileModel gather_nd = Make("gather_nd_runtime_index_out_of_range", runtime, "outside", [](GraphBuilder& b) {
    const int params = b.ConstF32("table", {4, 4}, std::vector<float>(16, 1.0f));
    b.Output(b.GatherNd(params, b.Input("ids", kI32, {2, 2})));
  });
  gather_nd.inputs = {Ints({2, 2}, {0, 0, 9, 9})};
  corpus.push_back(std::move(gather_nd));
  // TOPK_V2 with k fed at run time: k past the last dimension.
  HostileModel topk = Make(
      "topk_runtime_k_too_large", runtime, "k",
      [](GraphBuilder& b) {
        const int x = b.Input("x", kF32, {1, 8});
        const auto [values, indices] = b.TopKV2(x, 3);
        b.Output(values);
        b.Output(indices);
      },
      [](ir::Subgraph& g) {
        ir::Tensor k;
        k.name = "k";
        k.dtype = kI32;
        g.ops[0].inputs[1] = g.AddTensor(k);
        g.inputs.push_back(g.ops[0].inputs[1]);
      });
  topk.inputs = {Floats({1, 8}, {1, 2, 3, 4, 5, 6, 7, 8}), Ints({}, {50})};
  corpus.push_back(std::move(topk));
}

void AddOdd(std::vector<HostileModel>& corpus) {
  // MediaPipe's unpooling places an index wherever it points and skips what
  // falls outside the output; one no int holds must not wrap.
  HostileModel unpool = Make("unpooling_indices_not_ints", Hostility::kOdd, "", [](GraphBuilder& b) {
    const int x = b.Input("x", kF32, {1, 2, 2, 1});
    const int indices = b.Input("argmax", kF32, {1, 2, 2, 1});
    b.Output(b.MaxUnpooling2D(x, indices, tfl::Padding_SAME, 2, 2, 2, 2));
  });
  unpool.inputs = {Floats({1, 2, 2, 1}, {1, 2, 3, 4}),
                   Floats({1, 2, 2, 1}, {0, 1e30f, std::numeric_limits<float>::quiet_NaN(), -3e9f})};
  corpus.push_back(std::move(unpool));
  // A stride past the input is odd but well defined: one output position.
  corpus.push_back(Make("conv_stride_int32_max", Hostility::kOdd, "", Conv, [](ir::Subgraph& g) {
    ConvOptions(g).stride_w = kInt32Max;
    ConvOptions(g).stride_h = kInt32Max;
    g.tensors[g.outputs[0]].shape = {1, 1, 1, 8};
  }));
}

}  // namespace

std::vector<HostileModel> HostileCorpus() {
  std::vector<HostileModel> corpus;
  AddInvalid(corpus);
  AddTooBig(corpus);
  AddRuntimeValues(corpus);
  AddOdd(corpus);
  return corpus;
}

}  // namespace gpuclean::testing
