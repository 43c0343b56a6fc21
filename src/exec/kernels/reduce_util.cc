#include "exec/kernels/reduce_util.h"

#include <type_traits>

#include "exec/kernels/elementwise_util.h"
#include "exec/kernels/fp16_compute.h"

namespace gpuclean::exec::kernels {

namespace {

const char* ReduceName(ReduceKind kind) {
  switch (kind) {
    case ReduceKind::kSum: return "SUM";
    case ReduceKind::kMean: return "MEAN";
    case ReduceKind::kMax: return "REDUCE_MAX";
    case ReduceKind::kMin: return "REDUCE_MIN";
    case ReduceKind::kProd: return "REDUCE_PROD";
    case ReduceKind::kAny: return "REDUCE_ANY";
    case ReduceKind::kAll: return "REDUCE_ALL";
  }
  return "?";
}

// The input seen as alternating kept / reduced runs of dimensions.
struct ReducePlan {
  std::vector<int64_t> n;
  std::vector<bool> reduced;
  std::vector<int64_t> in_stride;
  std::vector<int64_t> out_stride;  // 0 along reduced dims
  int64_t out_size = 1;
  int first_kept = -1;
};

ReducePlan PlanReduce(std::span<const int32_t> shape, const std::vector<bool>& mask) {
  ReducePlan p;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 1) continue;
    if (!p.n.empty() && p.reduced.back() == mask[i]) {
      p.n.back() *= shape[i];
      continue;
    }
    p.n.push_back(shape[i]);
    p.reduced.push_back(mask[i]);
  }
  const size_t m = p.n.size();
  p.in_stride.assign(m, 1);
  p.out_stride.assign(m, 0);
  int64_t in_acc = 1, out_acc = 1;
  for (size_t k = m; k-- > 0;) {
    p.in_stride[k] = in_acc;
    in_acc *= p.n[k];
    if (!p.reduced[k]) {
      p.out_stride[k] = out_acc;
      out_acc *= p.n[k];
    }
  }
  p.out_size = out_acc;
  for (size_t k = 0; k < m; ++k)
    if (!p.reduced[k]) {
      p.first_kept = static_cast<int>(k);
      break;
    }
  return p;
}

// A float sum (SUM, MEAN in fp32), whose contiguous runs Walk adds in lanes.
struct ReduceFloatSum {
  float operator()(float a, float x) const { return a + x; }
};

// The sum of n contiguous floats in eight lanes (element i into lane i % 8),
// added pairwise at the end: a fixed order, so every thread count gives the
// same bits, within float rounding of the element-order sum, at vector speed
// instead of one add latency per element (a LayerNorm's two MEANs per row).
float ContiguousLaneSum(const float* x, int64_t n) {
  float lane[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j) lane[j] += x[i + j];
  for (int j = 0; i < n; ++i, ++j) lane[j] += x[i];
  return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

// REDUCE_MAX and REDUCE_MIN: `a` stays unless `x` wins (NaN never does).
struct ReduceMaxOp {
  template <typename A>
  A operator()(A a, A x) const {
    return x > a ? x : a;
  }
};
struct ReduceMinOp {
  template <typename A>
  A operator()(A a, A x) const {
    return x < a ? x : a;
  }
};

// A whole float tensor through REDUCE_MAX/MIN's `op` (keeps `a` unless `x`
// wins, so NaN never wins) in 16 lanes, each started at x[0] and fed every
// 16th element after it, folded in lane order: the value the element-order
// fold gives (NaN when x[0] is, as there), at vector speed where a
// loop-carried compare is one latency per element (a quantized model's
// per-tensor min and max). Only which of +0 and -0 ties for the result may
// differ.
template <typename Op>
float LaneFold(const float* x, int64_t n, Op op) {
  float lane[16];
  for (float& l : lane) l = x[0];
  int64_t i = 1;
  for (; i + 16 <= n; i += 16)
    for (int j = 0; j < 16; ++j) lane[j] = op(lane[j], x[i + j]);
  for (int j = 0; i < n; ++i, ++j) lane[j] = op(lane[j], x[i]);
  float a = lane[0];
  for (int j = 1; j < 16; ++j) a = op(a, lane[j]);
  return a;
}

// Folds the input into `acc` (one accumulator per output element, already
// holding the initial value) in the input's row-major order, so every output
// sees its elements in the same order as LiteRT's reference reducer; float
// sums along a contiguous run go through ContiguousLaneSum instead.
template <typename T, typename Acc, typename Op>
void Walk(const ReducePlan& p, size_t level, const T* in, Acc* acc, int64_t begin, int64_t end, Op op) {
  const size_t last = p.n.size() - 1;
  if (level == last) {
    const int64_t s = p.in_stride[level];  // 1
    if (p.reduced[level]) {
      // Accumulation along a contiguous reduced run.
      if constexpr (std::is_same_v<Op, ReduceFloatSum>) {
        *acc += ContiguousLaneSum(in + begin, end - begin);
        return;
      }
      Acc a = *acc;
      for (int64_t i = begin; i < end; ++i) a = op(a, static_cast<Acc>(in[i * s]));
      *acc = a;
    } else {
      // Accumulation across a kept run: one accumulator per element.
      for (int64_t i = begin; i < end; ++i) acc[i] = op(acc[i], static_cast<Acc>(in[i * s]));
    }
    return;
  }
  for (int64_t i = begin; i < end; ++i)
    Walk(p, level + 1, in + i * p.in_stride[level], acc + i * p.out_stride[level], 0, p.n[level + 1], op);
}

template <typename T, typename Acc, typename Op>
void ReduceInto(ThreadPool& pool, const ReducePlan& p, const T* in, Acc* acc, Op op) {
  if (p.n.empty()) {  // a single element
    acc[0] = op(acc[0], static_cast<Acc>(in[0]));
    return;
  }
  if (p.first_kept < 0) {
    // Everything reduces to one value: like LiteRT, start from the first element.
    int64_t total = 1;
    for (int64_t d : p.n) total *= d;
    if constexpr (std::is_same_v<Op, ReduceFloatSum>) {
      acc[0] = ContiguousLaneSum(in, total);
    } else if constexpr (std::is_same_v<T, float> && std::is_same_v<Acc, float> &&
                         (std::is_same_v<Op, ReduceMaxOp> || std::is_same_v<Op, ReduceMinOp>)) {
      acc[0] = LaneFold(in, total, op);
    } else {
      Acc a = static_cast<Acc>(in[0]);
      for (int64_t i = 1; i < total; ++i) a = op(a, static_cast<Acc>(in[i]));
      acc[0] = a;
    }
    return;
  }
  // Split the first kept run over the pool: chunks write disjoint outputs.
  const size_t k = static_cast<size_t>(p.first_kept);
  int64_t per_item = 1;
  for (size_t j = k + 1; j < p.n.size(); ++j) per_item *= p.n[j];
  for (size_t j = 0; j < k; ++j) per_item *= p.n[j];
  const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(per_item, 1));
  pool.ParallelFor(p.n[k], grain, [&](int64_t begin, int64_t end) {
    // Reduced runs before the first kept one are walked whole in each chunk.
    std::vector<int64_t> idx(k, 0);
    while (true) {
      int64_t off = 0;
      for (size_t j = 0; j < k; ++j) off += idx[j] * p.in_stride[j];
      Walk(p, k, in + off, acc, begin, end, op);
      size_t j = k;
      while (j-- > 0) {
        if (++idx[j] < p.n[j]) break;
        idx[j] = 0;
      }
      if (j == static_cast<size_t>(-1)) break;
    }
  });
}

template <typename T, typename Acc>
void ReduceTyped(KernelContext& ctx, ReduceKind kind, const ReducePlan& p, int64_t count) {
  const Tensor& input = ctx.input(0);
  Tensor& output = ctx.output(0);
  const T* in = input.as<const T>();
  T* out = output.as<T>();
  const int64_t out_n = output.num_elements();
  if (out_n != p.out_size && input.num_elements() != 0)
    ThrowOpBadInput(ctx, "output holds {} elements but the reduction gives {}", out_n, p.out_size);

  Acc init{};
  switch (kind) {
    case ReduceKind::kSum:
    case ReduceKind::kMean: init = Acc(0); break;
    case ReduceKind::kProd: init = Acc(1); break;
    case ReduceKind::kMax: init = std::numeric_limits<Acc>::lowest(); break;
    case ReduceKind::kMin: init = std::numeric_limits<Acc>::max(); break;
    case ReduceKind::kAny: init = Acc(0); break;
    case ReduceKind::kAll: init = Acc(1); break;
  }
  if (input.num_elements() == 0) {
    // LiteRT: MEAN of nothing is NaN (0 for integers); the others give their initial value.
    const T fill = kind == ReduceKind::kMean ? std::numeric_limits<T>::quiet_NaN() : static_cast<T>(init);
    for (int64_t i = 0; i < out_n; ++i) out[i] = fill;
    return;
  }
  std::vector<Acc> scratch;
  Acc* acc;
  if constexpr (std::is_same_v<T, Acc>) {
    acc = out;
  } else {
    scratch.resize(static_cast<size_t>(out_n));
    acc = scratch.data();
  }
  std::fill(acc, acc + out_n, init);
  switch (kind) {
    case ReduceKind::kSum:
    case ReduceKind::kMean:
      if constexpr (std::is_same_v<T, float> && std::is_same_v<Acc, float>)
        ReduceInto(ctx.pool, p, in, acc, ReduceFloatSum{});
      else
        ReduceInto(ctx.pool, p, in, acc, [](Acc a, Acc x) { return ew::WrapAdd(a, x); });
      break;
    case ReduceKind::kProd: ReduceInto(ctx.pool, p, in, acc, [](Acc a, Acc x) { return ew::WrapMul(a, x); }); break;
    case ReduceKind::kMax: ReduceInto(ctx.pool, p, in, acc, ReduceMaxOp{}); break;
    case ReduceKind::kMin: ReduceInto(ctx.pool, p, in, acc, ReduceMinOp{}); break;
    case ReduceKind::kAny: ReduceInto(ctx.pool, p, in, acc, [](Acc a, Acc x) { return Acc(a || x); }); break;
    case ReduceKind::kAll: ReduceInto(ctx.pool, p, in, acc, [](Acc a, Acc x) { return Acc(a && x); }); break;
  }
  if (kind == ReduceKind::kMean) {
    // Float: sum / count in float. Integers: integer sum / count, truncating.
    for (int64_t i = 0; i < out_n; ++i) out[i] = static_cast<T>(acc[i] / static_cast<Acc>(count));
  } else if constexpr (!std::is_same_v<T, Acc>) {
    for (int64_t i = 0; i < out_n; ++i) out[i] = static_cast<T>(acc[i]);
  }
}

// fp16-compute SUM/MEAN/REDUCE_PROD of float32: per output, the elements in
// the input's row-major order through fp16::LaneSum / LaneProduct.
// Steps the row-major index over the first `dims` dimensions of the plan,
// keeping the input and output offsets in step.
void Advance(const ReducePlan& p, size_t dims, std::vector<int64_t>& idx, int64_t& in_off, int64_t& out_off) {
  for (size_t j = dims; j-- > 0;) {
    in_off += p.in_stride[j];
    out_off += p.out_stride[j];
    if (++idx[j] < p.n[j]) return;
    in_off -= p.in_stride[j] * p.n[j];
    out_off -= p.out_stride[j] * p.n[j];
    idx[j] = 0;
  }
}

// ReduceFp16<LaneSum> when the innermost dimension is kept and contiguous in
// input and output (a spatial MEAN over NHWC): one sweep of it feeds one
// element to each output of a block, and the outputs of a block have all
// seen the same number of elements, so they share a lane index and the sweep
// is one vector add and round. Same operations as LaneSum, same bits.
bool ReduceFp16KeptInner(KernelContext& ctx, ReduceKind kind, const ReducePlan& p, int64_t count) {
  const size_t rank = p.n.size();
  if (rank == 0 || p.in_stride.back() != 1 || p.out_stride.back() != 1) return false;
  const float* in = ctx.input(0).as<const float>();
  float* out = ctx.output(0).as<float>();
  const int64_t inner = p.n.back(), outputs = p.out_size;
  std::vector<float> lanes(static_cast<size_t>(4 * outputs), 0.0f);  // lane l of output i: [l * outputs + i]
  std::vector<int64_t> seen(static_cast<size_t>(outputs), 0);        // per block, at its first output
  std::vector<int64_t> idx(rank - 1, 0);
  int64_t sweeps = 1;
  for (size_t j = 0; j + 1 < rank; ++j) sweeps *= p.n[j];
  int64_t in_off = 0, out_off = 0;
  for (int64_t e = 0; e < sweeps; ++e) {
    float* lane = lanes.data() + (seen[out_off]++ & 3) * outputs + out_off;
    const float* x = in + in_off;
    for (int64_t i = 0; i < inner; ++i) lane[i] += x[i];
    fp16::RoundInPlace(lane, inner);
    Advance(p, rank - 1, idx, in_off, out_off);
  }
  const float inverse = fp16::Round(1.0f / static_cast<float>(count));
  const float *l0 = lanes.data(), *l1 = l0 + outputs, *l2 = l1 + outputs, *l3 = l2 + outputs;
  for (int64_t i = 0; i < outputs; ++i) {
    const float v = fp16::Round(fp16::Round(l0[i] + l1[i]) + fp16::Round(l2[i] + l3[i]));
    out[i] = kind == ReduceKind::kMean ? fp16::Round(v * inverse) : v;
  }
  return true;
}

template <typename Lanes>
void ReduceFp16(KernelContext& ctx, ReduceKind kind, const ReducePlan& p, int64_t count) {
  if constexpr (std::is_same_v<Lanes, fp16::LaneSum>)
    if (ReduceFp16KeptInner(ctx, kind, p, count)) return;
  const float* in = ctx.input(0).as<const float>();
  float* out = ctx.output(0).as<float>();
  std::vector<Lanes> lanes(static_cast<size_t>(p.out_size));
  const size_t rank = p.n.size();
  std::vector<int64_t> idx(rank, 0);
  int64_t total = 1;
  for (int64_t d : p.n) total *= d;
  int64_t in_off = 0, out_off = 0;
  for (int64_t e = 0; e < total; ++e) {
    lanes[out_off].Add(in[in_off]);
    Advance(p, rank, idx, in_off, out_off);
  }
  const float inverse = fp16::Round(1.0f / static_cast<float>(count));
  for (int64_t i = 0; i < p.out_size; ++i) {
    const float v = lanes[i].Total();
    out[i] = kind == ReduceKind::kMean ? fp16::Round(v * inverse) : v;
  }
}

}  // namespace

void CheckReduce(const ir::Subgraph& graph, const ir::Op& op, ReduceKind kind) {
  RequireInputCount(graph, op, 2, 2);
  const ir::Tensor* in = IrInput(graph, op, 0);
  if (!in) ThrowOpUnsupported(graph, op, "input 0 is missing");
  const bool logical = kind == ReduceKind::kAny || kind == ReduceKind::kAll;
  switch (in->dtype) {
    case tfl::TensorType_FLOAT32:
    case tfl::TensorType_INT32:
    case tfl::TensorType_INT64:
      if (logical) ThrowUnsupportedDtype(graph, op, in->dtype);
      break;
    case tfl::TensorType_BOOL:
      if (!logical) ThrowUnsupportedDtype(graph, op, in->dtype);
      break;
    default: ThrowUnsupportedDtype(graph, op, in->dtype);
  }
  RequireOutputDtype(graph, op, 0, {in->dtype});
  RequireIndexInput(graph, op, 1, "axes");
}

void EvalReduce(KernelContext& ctx, ReduceKind kind) {
  const Tensor& input = ctx.input(0);
  const int rank = input.rank();
  std::vector<bool> mask(rank, false);
  for (int64_t a : ReadInts(ctx, 1)) mask[NormalizeAxisOrThrow(ctx, a, rank)] = true;
  int64_t count = 1;
  for (int i = 0; i < rank; ++i)
    if (mask[i]) count *= input.shape[i];
  const ReducePlan plan = PlanReduce(input.shape, mask);
  switch (input.dtype) {
    case tfl::TensorType_FLOAT32:
      if (fp16::Active(ctx) && ctx.output(0).num_elements() == plan.out_size && count > 0 &&
          (kind == ReduceKind::kSum || kind == ReduceKind::kMean)) {
        ReduceFp16<fp16::LaneSum>(ctx, kind, plan, count);
      } else if (fp16::Active(ctx) && ctx.output(0).num_elements() == plan.out_size && count > 0 &&
                 kind == ReduceKind::kProd) {
        ReduceFp16<fp16::LaneProduct>(ctx, kind, plan, count);
      } else {
        ReduceTyped<float, float>(ctx, kind, plan, count);
      }
      break;
    case tfl::TensorType_INT32:
      if (kind == ReduceKind::kMean) {
        ReduceTyped<int32_t, int64_t>(ctx, kind, plan, count);
      } else {
        ReduceTyped<int32_t, int32_t>(ctx, kind, plan, count);
      }
      break;
    case tfl::TensorType_INT64: ReduceTyped<int64_t, int64_t>(ctx, kind, plan, count); break;
    case tfl::TensorType_BOOL: ReduceTyped<bool, uint8_t>(ctx, kind, plan, count); break;
    default: ThrowOpBadInput(ctx, "{} does not handle dtype {}", ReduceName(kind), ir::DTypeName(input.dtype));
  }
}

}  // namespace gpuclean::exec::kernels
