// DepthToSpace (DCR and CRD) and SpaceToDepth on NHWC. TFLite's
// DEPTH_TO_SPACE / SPACE_TO_DEPTH use TensorFlow's DCR channel order, which
// is ONNX's DCR order, so those map one to one; CRD first regroups the
// channels from (c, dy, dx) to (dy, dx, c) with a rank-4 reshape/transpose
// (exact: it only moves elements).
#include <fmt/format.h>

#include "onnx/ops/ops.h"

namespace gpuclean::onnx::ops {
namespace {

int BlockSize(NodeContext& ctx) {
  const int64_t bs = ctx.Int("blocksize", 0);
  if (bs < 1) ctx.BadModel("blocksize must be >= 1");
  if (ctx.Rank(0) != 4) ctx.Fail(fmt::format("rank-{} input; only rank 4 (NCHW) is converted", ctx.Rank(0)));
  return static_cast<int>(bs);
}

void DepthToSpace(NodeContext& ctx) {
  const int bs = BlockSize(ctx);
  const Dims& in = ctx.Shape(0);
  if (in[1] % (bs * bs) != 0) ctx.BadModel("channels are not a multiple of blocksize^2");
  const std::string mode = ctx.Str("mode", "DCR");
  auto& b = ctx.b();
  int x = ctx.TensorIn(0, kToNhwc);
  if (mode == "CRD") {
    const int32_t n = static_cast<int32_t>(in[0]), c = static_cast<int32_t>(in[1]), h = static_cast<int32_t>(in[2]),
                  w = static_cast<int32_t>(in[3]);
    const int32_t cout = c / (bs * bs);
    x = b.Reshape(x, {n, h * w, cout, bs * bs});
    x = b.Transpose(x, {0, 1, 3, 2});
    x = b.Reshape(x, {n, h, w, c});
  } else if (mode != "DCR") {
    ctx.BadModel(fmt::format("unknown mode '{}'", mode));
  }
  ctx.Out(0, b.DepthToSpace(x, bs), kToNhwc);
}

void SpaceToDepth(NodeContext& ctx) {
  const int bs = BlockSize(ctx);
  const Dims& in = ctx.Shape(0);
  if (in[2] % bs != 0 || in[3] % bs != 0) ctx.BadModel("spatial dims are not multiples of blocksize");
  ctx.Out(0, ctx.b().SpaceToDepth(ctx.TensorIn(0, kToNhwc), bs), kToNhwc);
}

}  // namespace

void RegisterDepthSpace(Registry& r) {
  r.Add("DepthToSpace", DepthToSpace);
  r.Add("SpaceToDepth", SpaceToDepth);
}

}  // namespace gpuclean::onnx::ops
