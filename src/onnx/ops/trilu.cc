// Trilu (upper/lower; k a constant, or at run time compared against a
// constant column-minus-row grid): SELECT_V2 against the boolean mask over
// the last two dimensions (exact, and NaN/inf outside the kept
// triangle become 0 as ONNX says). EyeLike is a constant (it depends only
// on the input's shape).
#include <fmt/format.h>

#include "onnx/ops/ops.h"

namespace gpuclean::onnx::ops {
namespace {

void Trilu(NodeContext& ctx) {
  const Dims& in = ctx.Shape(0);
  const int rank = static_cast<int>(in.size());
  if (rank < 2) ctx.BadModel("Trilu needs rank >= 2");
  const bool upper = ctx.Int("upper", 1) != 0;
  const int64_t rows = in[rank - 2], cols = in[rank - 1];
  if (NumElements(in) == 0) ctx.Fail("empty tensors are not supported");
  auto& b = ctx.b();
  Shape32 mask_shape(rank, 1);
  mask_shape[rank - 2] = static_cast<int32_t>(rows);
  mask_shape[rank - 1] = static_cast<int32_t>(cols);
  const int x = ctx.Tensor(0);
  const auto dtype = b.tensor(x).dtype;
  if (dtype != tfl::TensorType_FLOAT32 && dtype != tfl::TensorType_INT32)
    ctx.Fail(fmt::format("Trilu of {} tensors is not supported", ir::DTypeName(dtype)));
  int mask;
  if (ctx.Has(1) && !ctx.IsConst(1)) {
    // A run-time k: compare the constant column-minus-row grid with it.
    std::vector<int32_t> diff(static_cast<size_t>(rows * cols));
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) diff[i * cols + j] = static_cast<int32_t>(j - i);
    const int grid = ctx.ConstI32(Dims(mask_shape.begin(), mask_shape.end()), diff);
    int k = ctx.Tensor(1);
    if (b.tensor(k).dtype != tfl::TensorType_INT32) k = b.Cast(k, tfl::TensorType_INT32);
    k = b.Reshape(k, {});
    mask = upper ? b.GreaterEqual(grid, k) : b.LessEqual(grid, k);
  } else {
    const int64_t k = ctx.Has(1) ? ctx.ConstInts(1).at(0) : 0;
    std::vector<bool> keep(static_cast<size_t>(rows * cols));
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) keep[i * cols + j] = upper ? j - i >= k : j - i <= k;
    mask = b.ConstBool(ctx.node().outputs.at(0) + "|mask", mask_shape, keep);
  }
  const int zero = dtype == tfl::TensorType_FLOAT32 ? ctx.ScalarF32(0) : ctx.ConstI32({}, {0});
  ctx.Out(0, b.SelectV2(mask, x, zero));
}

}  // namespace

void RegisterTrilu(Registry& r) { r.Add("Trilu", Trilu); }

}  // namespace gpuclean::onnx::ops
