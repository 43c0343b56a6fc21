// transpose-conv-zero-stuff: TRANSPOSE_CONV -> nearest upsample by the stride,
// times a 0/1 mask that keeps one sample per stride cell (the zero-stuffed
// input), zero PAD, CONV_2D with the spatially flipped kernel, and a SLICE
// when the padded map yields more than the output. The Mali delegate rejects
// TRANSPOSE_CONV; every op here is one it takes.
//
// Along one axis a transpose conv computes out[o] = sum over (i, k) with
// i*s + k - p = o of in[i] * w[k]. With U the input spread s apart (zeros
// between), that is sum_k U[o + p - k] * w[k]: a plain correlation of U
// padded by K-1-p in front with the kernel reversed. The products and their
// count are the same, so the pass is exact up to summation order.
//
// The MediaPipe custom op Convolution2DTransposeBias is left alone on
// purpose: the GPU delegates take it (data/compat), and the rewrite costs a
// stride^2 larger convolution.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "gpuclean/shapes.h"
#include "rewrite/graph_edit.h"
#include "rewrite/passes/passes.h"

namespace gpuclean::rewrite::passes {
namespace {

// The padding LiteRT puts before the first output along one axis.
int32_t PadBefore(tfl::Padding padding, int32_t out, int32_t filter, int32_t stride) {
  const int32_t windows = ir::WindowOutputSize(padding, out, filter, stride);
  return ir::ComputeWindowPadding(padding, out, filter, stride, 1, windows).before;
}

// Whether RESIZE_NEAREST_NEIGHBOR (no corner flags) to in*stride picks input
// i at position i*stride, computed in float as the runtimes do; the mask
// keeps only those positions.
bool NearestHitsEverySample(int32_t in, int32_t stride) {
  const float scale = static_cast<float>(in) / static_cast<float>(in * stride);
  for (int32_t i = 0; i < in; ++i)
    if (static_cast<int32_t>(std::floor(static_cast<float>(i * stride) * scale)) != i) return false;
  return true;
}

// Values of a constant-valued float tensor (stored, fp16, or behind DEQUANTIZE).
std::vector<float> ConstantFloats(const ir::Subgraph& g, int tensor) {
  std::vector<float> v = ConstFloats(g, tensor);
  if (!v.empty() || tensor < 0 || !IsConstantValued(g, tensor)) return v;
  const npy::Array a = EvaluateConstant(g, tensor);
  if (a.dtype != tfl::TensorType_FLOAT32) return {};
  return std::vector<float>(a.as<float>(), a.as<float>() + a.num_elements());
}

struct Axis {
  int32_t in = 0, out = 0, kernel = 0, stride = 1, pad = 0;
  int32_t stuffed() const { return in * stride; }
  int32_t front() const { return kernel - 1 - pad; }
  int32_t back() const { return std::max(0, out + pad - stuffed()); }
  int32_t conv_out() const { return stuffed() + front() + back() - kernel + 1; }
};

class TransposeConvZeroStuffPass final : public Pass {
 public:
  std::string_view id() const override { return "transpose-conv-zero-stuff"; }
  Exactness exactness() const override { return Exactness::kExact; }
  std::string_view contract() const override {
    return "float TRANSPOSE_CONV with constant weights (and bias) and static shapes; the zero-stuffed input is "
           "correlated with the flipped kernel (the same products, summed in another order)";
  }

  PassResult Apply(ir::Model& model, const PassOptions&) const override {
    PassResult result;
    GraphEdit edit(model, std::string(id()));
    const ir::Subgraph& g = edit.graph();
    const size_t count = g.ops.size();
    for (size_t i = 0; i < count; ++i) {
      const ir::Op op = g.ops[i];
      if (op.code != tfl::BuiltinOperator_TRANSPOSE_CONV || op.inputs.size() < 3 || op.outputs.size() != 1) continue;
      const auto* o = op.options.AsTransposeConvOptions();
      if (!o || o->stride_h <= 0 || o->stride_w <= 0) continue;
      const int w_index = op.inputs[1], x = op.inputs[2];
      const int bias_index = op.inputs.size() > 3 ? op.inputs[3] : -1;
      {
        const ir::Tensor& in = g.tensors[x];
        const ir::Tensor& out = g.tensors[op.outputs[0]];
        if (in.dtype != tfl::TensorType_FLOAT32 || out.dtype != tfl::TensorType_FLOAT32) continue;
        if (in.rank() != 4 || out.rank() != 4 || g.tensors[w_index].rank() != 4 || in.is_dynamic() ||
            out.is_dynamic())
          continue;
      }
      // Copies: the references die when the edit appends tensors.
      const std::vector<int32_t> in = g.tensors[x].shape, out = g.tensors[op.outputs[0]].shape,
                                 wt = g.tensors[w_index].shape;
      const int32_t oc = wt[0], kh = wt[1], kw = wt[2], ic = wt[3];
      if (ic != in[3] || oc != out[3] || in[0] != out[0]) continue;
      const std::vector<float> w = ConstantFloats(g, w_index);
      if (w.size() != static_cast<size_t>(oc) * kh * kw * ic) continue;
      std::vector<float> bias;
      if (bias_index >= 0) {
        bias = ConstantFloats(g, bias_index);
        if (bias.size() != static_cast<size_t>(oc)) continue;
      }
      const Axis ah{in[1], out[1], kh, o->stride_h, PadBefore(o->padding, out[1], kh, o->stride_h)};
      const Axis aw{in[2], out[2], kw, o->stride_w, PadBefore(o->padding, out[2], kw, o->stride_w)};
      if (ah.front() < 0 || aw.front() < 0 || ah.conv_out() < ah.out || aw.conv_out() < aw.out) continue;
      if (!NearestHitsEverySample(ah.in, ah.stride) || !NearestHitsEverySample(aw.in, aw.stride)) continue;

      const std::string tag = std::to_string(i);
      int u = x;
      if (ah.stride > 1 || aw.stride > 1) {
        u = edit.b().ResizeNearestNeighbor(x, ah.stuffed(), aw.stuffed());
        std::vector<float> mask(static_cast<size_t>(ah.stuffed()) * aw.stuffed(), 0.0f);
        for (int32_t r = 0; r < ah.stuffed(); r += ah.stride)
          for (int32_t c = 0; c < aw.stuffed(); c += aw.stride) mask[static_cast<size_t>(r) * aw.stuffed() + c] = 1.0f;
        u = edit.b().Mul(u, edit.ConstF32("stride_mask_" + tag, {1, ah.stuffed(), aw.stuffed(), 1}, mask));
      }
      if (ah.front() || ah.back() || aw.front() || aw.back())
        u = edit.b().Pad(u, {{0, 0}, {ah.front(), ah.back()}, {aw.front(), aw.back()}, {0, 0}});
      std::vector<float> flipped(w.size());
      for (int32_t c = 0; c < oc; ++c)
        for (int32_t y = 0; y < kh; ++y)
          for (int32_t z = 0; z < kw; ++z)
            std::copy_n(w.begin() + ((static_cast<int64_t>(c) * kh + y) * kw + z) * ic, ic,
                        flipped.begin() + ((static_cast<int64_t>(c) * kh + (kh - 1 - y)) * kw + (kw - 1 - z)) * ic);
      const int filter = edit.ConstF32("flipped_weights_" + tag, {oc, kh, kw, ic}, flipped);
      const int b = bias.empty() ? builder::kNoInput : edit.ConstF32("bias_" + tag, {oc}, bias);
      int y = edit.b().Conv2D(u, filter, b, tfl::Padding_VALID, 1, 1, o->fused_activation_function);
      if (ah.conv_out() != ah.out || aw.conv_out() != aw.out)
        y = edit.b().Slice(y, {0, 0, 0, 0}, {out[0], ah.out, aw.out, oc});
      result.sites.push_back(
          {static_cast<int>(i), "TRANSPOSE_CONV",
           fmt::format("nearest x{}x{} * stride mask, flipped {}x{} CONV_2D{}", ah.stride, aw.stride, kh, kw,
                       ah.conv_out() != ah.out || aw.conv_out() != aw.out ? ", SLICE" : "")});
      edit.Replace(static_cast<int>(i), {y});
    }
    edit.Commit();
    return result;
  }
};

}  // namespace

const Pass& TransposeConvZeroStuff() {
  static const TransposeConvZeroStuffPass pass;
  return pass;
}

}  // namespace gpuclean::rewrite::passes
