// DEQUANTIZE to float32: float16 values widen exactly; int8/uint8/int16 codes
// map to scale * (q - zero_point), per tensor or per channel along the
// tensor's quantized_dimension. In practice the input is a constant weight,
// so the interpreter runs this once at prepare time.
#include "exec/kernels/layout_util.h"

namespace gpuclean::exec::kernels {
namespace {

void CheckDequantize(const ir::Subgraph& graph, const ir::Op& op) {
  RequireInputCount(graph, op, 1, 1);
  const ir::Tensor* in = IrInput(graph, op, 0);
  if (!in) ThrowOpUnsupported(graph, op, "input 0 is missing");
  RequireOutputDtype(graph, op, 0, {tfl::TensorType_FLOAT32});
  switch (in->dtype) {
    case tfl::TensorType_FLOAT16:
    case tfl::TensorType_FLOAT32: return;
    case tfl::TensorType_INT8:
    case tfl::TensorType_UINT8:
    case tfl::TensorType_INT16: break;
    default: ThrowUnsupportedDtype(graph, op, in->dtype);
  }
  const ir::Quantization& q = in->quant;
  if (q.scale.empty())
    ThrowOpUnsupported(graph, op, "{} input '{}' has no quantization scale", ir::DTypeName(in->dtype), in->name);
  if (!q.zero_point.empty() && q.zero_point.size() != q.scale.size() && q.zero_point.size() != 1)
    ThrowOpUnsupported(graph, op, "input '{}' has {} scales but {} zero points", in->name, q.scale.size(),
                       q.zero_point.size());
  if (q.scale.size() > 1) {
    if (q.quantized_dimension < 0 || q.quantized_dimension >= in->rank())
      ThrowOpUnsupported(graph, op, "quantized_dimension {} is out of range for rank {}", q.quantized_dimension,
                         in->rank());
    if (static_cast<int64_t>(q.scale.size()) != in->shape[q.quantized_dimension])
      ThrowOpUnsupported(graph, op, "input '{}' has {} scales for {} channels", in->name, q.scale.size(),
                         in->shape[q.quantized_dimension]);
  }
}

template <typename Q>
void Affine(KernelContext& ctx, const ir::Quantization& q) {
  const Tensor& input = ctx.input(0);
  const Q* in = input.as<const Q>();
  float* out = ctx.output(0).as<float>();
  const int64_t n = input.num_elements();
  auto zero_point = [&](size_t c) -> int32_t {
    if (q.zero_point.empty()) return 0;
    return static_cast<int32_t>(q.zero_point.size() == 1 ? q.zero_point[0] : q.zero_point[c]);
  };
  if (q.scale.size() == 1) {
    const float scale = q.scale[0];
    const int32_t zp = zero_point(0);
    for (int64_t i = 0; i < n; ++i) out[i] = scale * static_cast<float>(static_cast<int32_t>(in[i]) - zp);
    return;
  }
  const int axis = q.quantized_dimension;
  const int64_t channels = input.shape[axis];
  const int64_t inner = ProductOf(input.shape, axis + 1, input.rank());
  const int64_t outer = ProductOf(input.shape, 0, axis);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t c = 0; c < channels; ++c) {
      const float scale = q.scale[c];
      const int32_t zp = zero_point(c);
      const int64_t base = (o * channels + c) * inner;
      for (int64_t i = 0; i < inner; ++i)
        out[base + i] = scale * static_cast<float>(static_cast<int32_t>(in[base + i]) - zp);
    }
}

void EvalDequantize(KernelContext& ctx) {
  const Tensor& input = ctx.input(0);
  float* out = ctx.output(0).as<float>();
  const int64_t n = input.num_elements();
  if (static_cast<size_t>(n) * ElementSize(input) > input.bytes)
    ThrowOpBadInput(ctx, "input holds {} bytes, fewer than its shape needs", input.bytes);
  const ir::Quantization& q = IrInput(ctx.graph, ctx.op, 0)->quant;
  switch (input.dtype) {
    case tfl::TensorType_FLOAT16: {
      const uint16_t* in = input.as<const uint16_t>();
      for (int64_t i = 0; i < n; ++i) out[i] = HalfToFloat(in[i]);
      return;
    }
    case tfl::TensorType_FLOAT32: std::memcpy(out, input.data, static_cast<size_t>(n) * 4); return;
    case tfl::TensorType_INT8: Affine<int8_t>(ctx, q); return;
    case tfl::TensorType_UINT8: Affine<uint8_t>(ctx, q); return;
    case tfl::TensorType_INT16: Affine<int16_t>(ctx, q); return;
    default: ThrowOpBadInput(ctx, "dtype {} is not supported", ir::DTypeName(input.dtype));
  }
}

}  // namespace

Kernel DequantizeKernel() { return {CheckDequantize, EvalDequantize}; }

}  // namespace gpuclean::exec::kernels
