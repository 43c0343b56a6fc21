// Pad (opset 11+: pads and constant_value as inputs; axes from opset 18), in
// whatever layout the input is stored, with the axes remapped:
//   constant -> PAD (zero) / PADV2 (a constant or run-time value)
//   reflect  -> MIRROR_PAD REFLECT
//   edge     -> MIRROR_PAD SYMMETRIC where every pad is at most 1 (the same
//               thing), otherwise the edge slice repeated by CONCATENATION
// Negative pads crop first (SLICE). Opset 2 Pad (pads/value attributes)
// arrives version-converted.
#include <fmt/format.h>

#include "onnx/ops/ops.h"

namespace gpuclean::onnx::ops {
namespace {

void Pad(NodeContext& ctx) {
  const Dims& in = ctx.Shape(0);
  const int rank = static_cast<int>(in.size());
  const std::string mode = ctx.Str("mode", "constant");
  std::vector<int64_t> pads = ctx.Has(1) ? ctx.ConstInts(1) : ctx.Ints("pads", {});
  std::vector<int64_t> axes;
  if (ctx.Has(3)) {
    axes = ctx.ConstInts(3);
  } else {
    for (int i = 0; i < rank; ++i) axes.push_back(i);
  }
  if (pads.size() != 2 * axes.size()) ctx.BadModel(fmt::format("{} pads for {} axes", pads.size(), axes.size()));
  std::vector<int64_t> begin(rank, 0), end(rank, 0);
  const size_t n = axes.size();
  for (size_t i = 0; i < n; ++i) {
    const int a = NormalizeAxis(axes[i], rank, ctx.node().Label());
    begin[a] = pads[i];
    end[a] = pads[i + n];
  }
  const Perm perm = ctx.PermOf(0);
  const Perm p = perm.empty() ? IdentityPerm(rank) : perm;
  auto& b = ctx.b();
  int x = ctx.TensorIn(0, perm);

  // Negative pads: crop.
  bool crop = false;
  std::vector<int32_t> cb(rank, 0), cs(rank);
  for (int i = 0; i < rank; ++i) {
    const int a = p[i];
    const int64_t lo = std::max<int64_t>(-begin[a], 0), hi = std::max<int64_t>(-end[a], 0);
    if (lo + hi >= in[a]) ctx.Fail("negative pads remove the whole axis; empty tensors are not supported");
    cb[i] = static_cast<int32_t>(lo);
    cs[i] = static_cast<int32_t>(in[a] - lo - hi);
    crop = crop || lo > 0 || hi > 0;
  }
  if (crop) x = b.Slice(x, cb, cs);
  builder::Paddings paddings(rank);
  bool any = false, small = true;
  for (int i = 0; i < rank; ++i) {
    const int a = p[i];
    paddings[i] = {static_cast<int32_t>(std::max<int64_t>(begin[a], 0)),
                   static_cast<int32_t>(std::max<int64_t>(end[a], 0))};
    any = any || paddings[i][0] > 0 || paddings[i][1] > 0;
    small = small && paddings[i][0] <= 1 && paddings[i][1] <= 1;
  }
  if (!any) {
    ctx.Out(0, crop ? x : b.Reshape(x, b.shape(x)), perm);
    return;
  }
  const auto dtype = b.tensor(x).dtype;
  int y = -1;
  if (mode == "constant") {
    if (ctx.Has(2) && !ctx.IsConst(2)) {
      int value = ctx.Tensor(2);
      if (b.tensor(value).dtype != dtype) value = b.Cast(value, dtype);
      value = b.Reshape(value, {1});
      std::vector<int32_t> flat;
      for (const auto& pr : paddings) flat.insert(flat.end(), pr.begin(), pr.end());
      const int pad_tensor = ctx.ConstI32({rank, 2}, flat);
      y = b.Op(tfl::BuiltinOperator_PADV2, {x, pad_tensor, value})[0];
    } else {
      float value = 0;
      if (ctx.Has(2)) {
        if (ctx.DType(2) == tfl::TensorType_FLOAT32) {
          value = ctx.ConstFloats(2).at(0);
        } else {
          const int64_t v = ctx.ConstInts(2).at(0);
          if (v < -(int64_t{1} << 24) || v > (int64_t{1} << 24))
            ctx.Fail("integer pad values beyond 2^24 are not supported");
          value = static_cast<float>(v);
        }
      }
      if (dtype != tfl::TensorType_FLOAT32 && dtype != tfl::TensorType_INT32)
        ctx.Fail(fmt::format("constant pads of {} tensors are not supported", ir::DTypeName(dtype)));
      y = value == 0.0f ? b.Pad(x, paddings) : b.PadV2(x, paddings, value);
    }
  } else if (mode == "reflect") {
    for (int i = 0; i < rank; ++i)
      if (paddings[i][0] >= b.shape(x)[i] || paddings[i][1] >= b.shape(x)[i])
        ctx.BadModel("reflect pads must be smaller than the axis");
    y = b.MirrorPad(x, paddings, tfl::MirrorPadMode_REFLECT);
  } else if (mode == "edge") {
    if (small) {
      y = b.MirrorPad(x, paddings, tfl::MirrorPadMode_SYMMETRIC);
    } else {
      y = x;
      for (int i = 0; i < rank; ++i) {
        if (paddings[i][0] == 0 && paddings[i][1] == 0) continue;
        const Shape32 s = b.shape(y);
        std::vector<int32_t> size(s.begin(), s.end()), first(rank, 0), last(rank, 0);
        size[i] = 1;
        last[i] = s[i] - 1;
        std::vector<int> parts;
        if (paddings[i][0] > 0) {
          const int edge = b.Slice(y, first, size);
          parts.insert(parts.end(), paddings[i][0], edge);
        }
        parts.push_back(y);
        if (paddings[i][1] > 0) {
          const int edge = b.Slice(y, last, size);
          parts.insert(parts.end(), paddings[i][1], edge);
        }
        y = b.Concatenation(parts, i);
      }
    }
  } else {
    ctx.Fail(fmt::format("mode '{}' is not supported", mode));
  }
  ctx.Out(0, y, perm);
}

}  // namespace

void RegisterPad(Registry& r) { r.Add("Pad", Pad); }

}  // namespace gpuclean::onnx::ops
