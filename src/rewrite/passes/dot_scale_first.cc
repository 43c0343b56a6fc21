// dot-scale-first: a dot product (CONV_2D, DEPTHWISE_CONV_2D,
// FULLY_CONNECTED, BATCH_MATMUL) of bounded inputs whose result is then
// multiplied by one scale
//   y = dot(x, W) * s            (through any RESHAPEs in between)
// sums at magnitudes half precision cannot hold: a dynamically quantized
// model (onnxruntime's quantize_dynamic: ConvInteger / MatMulInteger, then
// a Mul by x_scale * w_scale) sums products of codes up to 255 * 127, past
// 65504 after a few terms, so in an fp16 delegate its outputs are infinite.
// Rewritten with P a power of two chosen from the inputs' static bounds so
// that no partial sum can pass 2^15:
//   y = dot(x * P, W) * (s / P)
// Scaling by a power of two is exact in float, so every partial sum is the
// original's times P and the fp32 outputs are bit-identical; only the
// magnitudes the GPU holds change. Sites whose inputs have no static bound
// (a float activation, not codes) are left alone.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>

#include "gpuclean/error.h"
#include "rewrite/passes/passes.h"
#include "rewrite/pattern_pass.h"

namespace gpuclean::rewrite::passes {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Half's largest finite value is 65504: partial sums stay at or under 2^15.
constexpr double kMaxPartialSum = 32768;

struct Interval {
  double lo = -kInf, hi = kInf;
  bool bounded() const { return std::isfinite(lo) && std::isfinite(hi); }
  double magnitude() const { return std::max(std::fabs(lo), std::fabs(hi)); }
};

Interval Clamp(Interval v, double lo, double hi) { return {std::clamp(v.lo, lo, hi), std::clamp(v.hi, lo, hi)}; }

Interval Activation(const ir::Op& op, Interval v) {
  tfl::ActivationFunctionType act = tfl::ActivationFunctionType_NONE;
  if (const auto* o = op.options.AsAddOptions()) act = o->fused_activation_function;
  if (const auto* o = op.options.AsSubOptions()) act = o->fused_activation_function;
  if (const auto* o = op.options.AsMulOptions()) act = o->fused_activation_function;
  switch (act) {
    case tfl::ActivationFunctionType_RELU: return Clamp(v, 0, kInf);
    case tfl::ActivationFunctionType_RELU6: return Clamp(v, 0, 6);
    case tfl::ActivationFunctionType_RELU_N1_TO_1: return Clamp(v, -1, 1);
    default: return v;
  }
}

Interval Product(Interval a, Interval b) {
  if (!a.bounded() || !b.bounded()) return {};
  const double c[] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
  return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
}

// Bounds every value of `tensor` can take, from constants and the clamps,
// sums and rounding between them; unbounded where it depends on anything
// else.
Interval StaticRangeOnce(const ir::Subgraph& g, int tensor, int depth, std::map<int, Interval>& known);

Interval StaticRange(const ir::Subgraph& g, int tensor, int depth, std::map<int, Interval>& known) {
  if (tensor < 0 || depth > 48) return {};
  if (const auto it = known.find(tensor); it != known.end()) return it->second;
  const Interval v = StaticRangeOnce(g, tensor, depth, known);
  known[tensor] = v;
  return v;
}

Interval StaticRange(const ir::Subgraph& g, int tensor) {
  std::map<int, Interval> known;
  return StaticRange(g, tensor, 0, known);
}

Interval StaticRangeOnce(const ir::Subgraph& g, int tensor, int depth, std::map<int, Interval>& known) {
  if (IsConstantValued(g, tensor)) {
    if (g.tensors[tensor].num_elements() > (int64_t{1} << 22)) return {};
    try {
      const npy::Array a = EvaluateConstant(g, tensor);
      if (a.dtype != tfl::TensorType_FLOAT32 || a.num_elements() == 0) return {};
      const auto [lo, hi] = std::minmax_element(a.as<float>(), a.as<float>() + a.num_elements());
      return {*lo, *hi};
    } catch (const Error&) {
      return {};
    }
  }
  const int node = g.Producer(tensor);
  if (node < 0) return {};
  const ir::Op& op = g.ops[node];
  const auto in = [&](size_t k) {
    return k < op.inputs.size() ? StaticRange(g, op.inputs[k], depth + 1, known) : Interval{};
  };
  switch (op.code) {
    case tfl::BuiltinOperator_MAXIMUM: {
      const Interval a = in(0), b = in(1);
      return {std::max(a.lo, b.lo), std::max(a.hi, b.hi)};
    }
    case tfl::BuiltinOperator_MINIMUM: {
      const Interval a = in(0), b = in(1);
      return {std::min(a.lo, b.lo), std::min(a.hi, b.hi)};
    }
    case tfl::BuiltinOperator_ADD: {
      const Interval a = in(0), b = in(1);
      return Activation(op, {a.lo + b.lo, a.hi + b.hi});
    }
    case tfl::BuiltinOperator_SUB: {
      const Interval a = in(0), b = in(1);
      return Activation(op, {a.lo - b.hi, a.hi - b.lo});
    }
    case tfl::BuiltinOperator_MUL: return Activation(op, Product(in(0), in(1)));
    case tfl::BuiltinOperator_NEG: {
      const Interval a = in(0);
      return {-a.hi, -a.lo};
    }
    case tfl::BuiltinOperator_ROUND:
    case tfl::BuiltinOperator_FLOOR:
    case tfl::BuiltinOperator_CEIL: {
      const Interval a = in(0);
      return {std::floor(a.lo), std::ceil(a.hi)};
    }
    case tfl::BuiltinOperator_RELU: return Clamp(in(0), 0, kInf);
    case tfl::BuiltinOperator_RELU6: return Clamp(in(0), 0, 6);
    case tfl::BuiltinOperator_RELU_N1_TO_1: return Clamp(in(0), -1, 1);
    case tfl::BuiltinOperator_RELU_0_TO_1:
    case tfl::BuiltinOperator_LOGISTIC: return Clamp(in(0), 0, 1);
    case tfl::BuiltinOperator_TANH: return Clamp(in(0), -1, 1);
    case tfl::BuiltinOperator_RESHAPE:
    case tfl::BuiltinOperator_TRANSPOSE:
    case tfl::BuiltinOperator_SQUEEZE:
    case tfl::BuiltinOperator_EXPAND_DIMS:
    case tfl::BuiltinOperator_MAX_POOL_2D:
    case tfl::BuiltinOperator_DEQUANTIZE: return in(0);
    case tfl::BuiltinOperator_PAD: {  // pads with zeros
      const Interval a = in(0);
      return {std::min(a.lo, 0.0), std::max(a.hi, 0.0)};
    }
    default: return {};
  }
}

// The largest sum of |products| one output of the dot product can hold:
// max |x| times the largest L1 norm of a weight row (or, for a runtime
// operand, its length times its bound). Infinite when not bounded.
double PartialSumBound(const ir::Subgraph& g, const ir::Op& dot) {
  const Interval x = StaticRange(g, dot.inputs[0]);
  if (!x.bounded() || dot.inputs.size() < 2) return kInf;
  const ir::Tensor& wt = g.tensors[dot.inputs[1]];
  const int rank = wt.rank();
  if (rank < 2) return kInf;
  int64_t rows = 0, length = 0;  // weight rows, each summed over `length` values
  switch (dot.code) {
    case tfl::BuiltinOperator_CONV_2D:
    case tfl::BuiltinOperator_FULLY_CONNECTED:
      rows = wt.shape[0];
      length = wt.num_elements() / std::max<int64_t>(1, rows);
      break;
    case tfl::BuiltinOperator_DEPTHWISE_CONV_2D:  // [1, KH, KW, C]: one row per channel
      rows = wt.shape[rank - 1];
      length = wt.num_elements() / std::max<int64_t>(1, rows);
      break;
    case tfl::BuiltinOperator_BATCH_MATMUL: {
      const auto* o = dot.options.AsBatchMatMulOptions();
      length = o && o->adj_y ? wt.shape[rank - 1] : wt.shape[rank - 2];
      break;
    }
    default: return kInf;
  }
  if (IsConstantValued(g, dot.inputs[1]) && dot.code != tfl::BuiltinOperator_BATCH_MATMUL &&
      wt.num_elements() <= (int64_t{1} << 26)) {
    try {
      const npy::Array w = EvaluateConstant(g, dot.inputs[1]);
      if (w.dtype == tfl::TensorType_FLOAT32 && rows > 0) {
        double worst = 0;
        const float* v = w.as<float>();
        for (int64_t r = 0; r < rows; ++r) {
          double l1 = 0;
          for (int64_t k = 0; k < length; ++k)
            l1 += std::fabs(dot.code == tfl::BuiltinOperator_DEPTHWISE_CONV_2D ? v[k * rows + r] : v[r * length + k]);
          worst = std::max(worst, l1);
        }
        return x.magnitude() * worst;
      }
    } catch (const Error&) {}
  }
  const Interval w = StaticRange(g, dot.inputs[1]);
  return w.bounded() ? x.magnitude() * w.magnitude() * static_cast<double>(length) : kInf;
}

bool IsDot(tfl::BuiltinOperator code) {
  return code == tfl::BuiltinOperator_CONV_2D || code == tfl::BuiltinOperator_DEPTHWISE_CONV_2D ||
         code == tfl::BuiltinOperator_FULLY_CONNECTED || code == tfl::BuiltinOperator_BATCH_MATMUL;
}

// Scaling the sums by P commutes with the dot product's activation.
bool ActivationCommutesWithScaling(const ir::Op& dot) {
  tfl::ActivationFunctionType act = tfl::ActivationFunctionType_NONE;
  if (const auto* o = dot.options.AsConv2DOptions()) act = o->fused_activation_function;
  if (const auto* o = dot.options.AsDepthwiseConv2DOptions()) act = o->fused_activation_function;
  if (const auto* o = dot.options.AsFullyConnectedOptions()) act = o->fused_activation_function;
  return act == tfl::ActivationFunctionType_NONE || act == tfl::ActivationFunctionType_RELU;
}

// A bias that would have to be scaled too: present and not all zeros.
bool HasNonZeroBias(const ir::Subgraph& g, const ir::Op& dot) {
  if (dot.code == tfl::BuiltinOperator_BATCH_MATMUL || dot.inputs.size() < 3 || dot.inputs[2] < 0) return false;
  const Interval bias = StaticRange(g, dot.inputs[2]);
  return !(bias.lo == 0 && bias.hi == 0);
}

// The MUL's operands, the dot product behind y and the power of two.
struct ScaleFirst {
  int side = 0;  // the operand y is the MUL's input `side`
  int y = -1, scale = -1;
  int dot = -1, x = -1;  // the dot product's node and its input
  int shift = 0;
  double bound = 0;
  std::string dot_name, dot_value;
};

class DotScaleFirstPass final : public PatternPass<ScaleFirst> {
 public:
  DotScaleFirstPass()
      : PatternPass(
            {"dot-scale-first", Exactness::kExact,
             "MUL (no fused activation) by a one-element float scale of the result of CONV_2D, DEPTHWISE_CONV_2D, "
             "FULLY_CONNECTED or BATCH_MATMUL (through RESHAPEs, each the sole consumer) whose partial sums, bounded "
             "from constants and the clamps before them, can pass 2^15; the dot product with no zero-breaking "
             "activation (NONE or RELU) and no non-zero bias"},
            {tfl::BuiltinOperator_MUL}) {}

 private:
  std::optional<ScaleFirst> Match(const OpSite& site) const override {
    const ir::Subgraph& g = site.graph();
    const ir::Op& mul = site.op;
    if (mul.inputs.size() != 2 || !HasNoFusedActivation(mul)) return std::nullopt;
    for (int side = 0; side < 2; ++side) {
      const int y = mul.inputs[side], scale = mul.inputs[1 - side];
      if (y < 0 || scale < 0 || y == scale) continue;
      if (g.tensors[scale].num_elements() != 1 || g.tensors[scale].dtype != tfl::TensorType_FLOAT32) continue;
      if (SoleConsumer(g, y) != site.node) continue;
      // Back through the RESHAPEs to the dot product: scaling commutes with them.
      int value = y, node = g.Producer(y);
      while (node >= 0 && g.ops[node].code == tfl::BuiltinOperator_RESHAPE) {
        value = g.ops[node].inputs[0];
        node = g.Producer(value);
        if (node >= 0 && SoleConsumer(g, value) < 0) node = -1;
      }
      if (node < 0 || !IsDot(g.ops[node].code) || !ActivationCommutesWithScaling(g.ops[node])) continue;
      if (HasNonZeroBias(g, g.ops[node])) continue;
      const int x = g.ops[node].inputs[0];
      if (x < 0 || g.tensors[x].dtype != tfl::TensorType_FLOAT32) continue;
      const double bound = PartialSumBound(g, g.ops[node]);
      if (!std::isfinite(bound) || bound <= kMaxPartialSum) continue;
      ScaleFirst f;
      f.side = side, f.y = y, f.scale = scale, f.dot = node, f.x = x, f.bound = bound;
      f.shift = static_cast<int>(std::ceil(std::log2(bound / kMaxPartialSum)));
      f.dot_name = std::string(tfl::EnumNameBuiltinOperator(g.ops[node].code));
      f.dot_value = g.tensors[value].name;
      return f;
    }
    return std::nullopt;
  }

  std::string Rewrite(OpSite& site, const ScaleFirst& f) const override {
    GraphEdit& edit = site.edit;
    const float p = std::ldexp(1.0f, -f.shift);
    const int scaled = edit.b().Mul(f.x, edit.ConstF32(fmt::format("p_{}", site.node), {}, {p}));
    const int unscale = edit.b().Mul(f.scale, edit.ConstF32(fmt::format("inv_p_{}", site.node), {}, {1.0f / p}));
    edit.mutable_graph().ops[f.dot].inputs[0] = scaled;
    edit.Replace(site.node, {f.side == 0 ? edit.b().Mul(f.y, unscale) : edit.b().Mul(unscale, f.y)});
    return fmt::format("{} '{}' sums its input times 2^-{} (partial sums up to {:.3g} -> {:.3g}); the scale times 2^{}",
                       f.dot_name, f.dot_value, f.shift, f.bound, f.bound * p, f.shift);
  }
};

}  // namespace

const Pass& DotScaleFirst() {
  static const DotScaleFirstPass pass;
  return pass;
}

}  // namespace gpuclean::rewrite::passes
