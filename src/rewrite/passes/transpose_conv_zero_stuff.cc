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
#include "rewrite/passes/passes.h"
#include "rewrite/pattern_pass.h"

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

// What the rewrite needs, all copies (references into the graph die when
// the edit appends tensors).
struct ZeroStuff {
  std::vector<int32_t> out;  // the output shape
  std::vector<float> w, bias;
  int32_t oc = 0, kh = 0, kw = 0, ic = 0;
  Axis ah, aw;
  tfl::ActivationFunctionType activation = tfl::ActivationFunctionType_NONE;
};

class TransposeConvZeroStuffPass final : public PatternPass<ZeroStuff> {
 public:
  TransposeConvZeroStuffPass()
      : PatternPass({"transpose-conv-zero-stuff", Exactness::kExact,
                     "float TRANSPOSE_CONV with constant weights (and bias) and static shapes; the zero-stuffed input "
                     "is correlated with the flipped kernel (the same products, summed in another order)"},
                    {tfl::BuiltinOperator_TRANSPOSE_CONV}) {}

 private:
  std::optional<ZeroStuff> Match(const OpSite& site) const override {
    const ir::Op& op = site.op;
    if (op.inputs.size() < 3 || op.outputs.size() != 1) return std::nullopt;
    const auto* o = op.options.AsTransposeConvOptions();
    if (!o || o->stride_h <= 0 || o->stride_w <= 0) return std::nullopt;
    const ir::Subgraph& g = site.graph();
    const int w_index = op.inputs[1], x = op.inputs[2];
    const int bias_index = op.inputs.size() > 3 ? op.inputs[3] : -1;
    {
      const ir::Tensor& in = g.tensors[x];
      const ir::Tensor& out = g.tensors[op.outputs[0]];
      if (in.dtype != tfl::TensorType_FLOAT32 || out.dtype != tfl::TensorType_FLOAT32) return std::nullopt;
      if (in.rank() != 4 || out.rank() != 4 || g.tensors[w_index].rank() != 4 || in.is_dynamic() || out.is_dynamic())
        return std::nullopt;
    }
    ZeroStuff f;
    const std::vector<int32_t>& in = g.tensors[x].shape;
    const std::vector<int32_t>& wt = g.tensors[w_index].shape;
    f.out = g.tensors[op.outputs[0]].shape;
    const std::vector<int32_t>& out = f.out;
    f.oc = wt[0], f.kh = wt[1], f.kw = wt[2], f.ic = wt[3];
    if (f.ic != in[3] || f.oc != out[3] || in[0] != out[0]) return std::nullopt;
    f.w = ConstantFloats(g, w_index);
    if (f.w.size() != static_cast<size_t>(f.oc) * f.kh * f.kw * f.ic) return std::nullopt;
    if (bias_index >= 0) {
      f.bias = ConstantFloats(g, bias_index);
      if (f.bias.size() != static_cast<size_t>(f.oc)) return std::nullopt;
    }
    f.ah = Axis{in[1], out[1], f.kh, o->stride_h, PadBefore(o->padding, out[1], f.kh, o->stride_h)};
    f.aw = Axis{in[2], out[2], f.kw, o->stride_w, PadBefore(o->padding, out[2], f.kw, o->stride_w)};
    const Axis &ah = f.ah, &aw = f.aw;
    if (ah.front() < 0 || aw.front() < 0 || ah.conv_out() < ah.out || aw.conv_out() < aw.out) return std::nullopt;
    if (!NearestHitsEverySample(ah.in, ah.stride) || !NearestHitsEverySample(aw.in, aw.stride)) return std::nullopt;
    f.activation = o->fused_activation_function;
    return f;
  }

  std::string Rewrite(OpSite& site, const ZeroStuff& f) const override {
    GraphEdit& edit = site.edit;
    const Axis &ah = f.ah, &aw = f.aw;
    const int32_t oc = f.oc, kh = f.kh, kw = f.kw, ic = f.ic;
    const int x = site.op.inputs[2];
    const std::string tag = std::to_string(site.node);
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
    std::vector<float> flipped(f.w.size());
    for (int32_t c = 0; c < oc; ++c)
      for (int32_t y = 0; y < kh; ++y)
        for (int32_t z = 0; z < kw; ++z)
          std::copy_n(f.w.begin() + ((static_cast<int64_t>(c) * kh + y) * kw + z) * ic, ic,
                      flipped.begin() + ((static_cast<int64_t>(c) * kh + (kh - 1 - y)) * kw + (kw - 1 - z)) * ic);
    const int filter = edit.ConstF32("flipped_weights_" + tag, {oc, kh, kw, ic}, flipped);
    const int b = f.bias.empty() ? builder::kNoInput : edit.ConstF32("bias_" + tag, {oc}, f.bias);
    int y = edit.b().Conv2D(u, filter, b, tfl::Padding_VALID, 1, 1, f.activation);
    if (ah.conv_out() != ah.out || aw.conv_out() != aw.out)
      y = edit.b().Slice(y, {0, 0, 0, 0}, {f.out[0], ah.out, aw.out, oc});
    edit.Replace(site.node, {y});
    return fmt::format("nearest x{}x{} * stride mask, flipped {}x{} CONV_2D{}", ah.stride, aw.stride, kh, kw,
                       ah.conv_out() != ah.out || aw.conv_out() != aw.out ? ", SLICE" : "");
  }
};

}  // namespace

const Pass& TransposeConvZeroStuff() {
  static const TransposeConvZeroStuffPass pass;
  return pass;
}

}  // namespace gpuclean::rewrite::passes
