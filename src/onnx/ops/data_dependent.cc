// Values whose length depends on the data, lowered to static graphs: a
// padded tensor plus a count of its valid rows (ValidRows, lowering.h), and
// the run-time integers computed from such counts (IntRange), which give
// whatever they size a static bound.
//
//   NonZero            -> the flat positions of the non-zero elements first
//                         (TOPK_V2 over position keys), coordinates gathered
//                         from a table, counted by SUM;
//   NonMaxSuppression  -> NON_MAX_SUPPRESSION_V4 with padding scored out,
//                         max_output_size capped by the boxes' bound;
//   TopK of a computed k (min(k, n) in torchvision) -> TOPK_V2 of the bound,
//                         padding pushed past every valid row;
//   Concat along the padded axis -> the valid rows compacted to the front;
//   reductions over it  -> padding filled with the reduction's identity;
//   Shape / Gather / Slice / Squeeze / ... -> the count carried on.
//
// Valid rows come first everywhere, so a selection only has to push the
// padding past them: ties go to the lower index, which is a valid row.
// Indices that point into a padded axis come from these ops and are never
// negative, so a Gather wraps nothing. Every other op that reads such a value
// is refused naming it (lowering.cc), never lowered on the padding as if it
// were data.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>

#include "onnx/ops/ops.h"

namespace gpuclean::onnx {

int ZeroPastCount(builder::GraphBuilder& b, int x, const ValidRows& rows) {
  const std::vector<int32_t> shape = b.tensor(x).shape;  // a copy: adding tensors moves them
  const int32_t bound = shape.at(static_cast<size_t>(rows.axis));
  std::vector<int32_t> positions(static_cast<size_t>(bound));
  std::iota(positions.begin(), positions.end(), 0);
  int mask = b.Less(b.ConstI32("positions", {bound}, positions), rows.count);
  std::vector<int32_t> along(shape.size(), 1);
  along[static_cast<size_t>(rows.axis)] = bound;
  if (shape.size() != 1) mask = b.Reshape(mask, along);
  const ir::DType dtype = b.tensor(x).dtype;
  int zero;
  if (dtype == tfl::TensorType_FLOAT32)
    zero = b.ConstF32("zero", {}, {0.0f});
  else if (dtype == tfl::TensorType_INT32)
    zero = b.ConstI32("zero", {}, {0});
  else if (dtype == tfl::TensorType_BOOL)
    zero = b.ConstBool("zero", {}, {false});
  else
    return x;
  return b.SelectV2(mask, x, zero);
}

namespace ops {
// Named, not anonymous: unity builds join this file with the ordinary
// lowerings of the same ops.
namespace padded {

const Value& V(NodeContext& ctx, int i) { return ctx.In(i); }
bool PaddedIn(NodeContext& ctx, int i) { return ctx.Has(i) && V(ctx, i).rows.has_value(); }

int FirstPadded(NodeContext& ctx) {
  for (int i = 0; i < ctx.num_inputs(); ++i)
    if (PaddedIn(ctx, i)) return i;
  return -1;
}

void Normal(NodeContext& ctx) { Rules().rules.at(ctx.node().op_type)(ctx); }

const Value& Output(NodeContext& ctx, int k) { return ctx.ValueOf(ctx.node().outputs.at(k)); }

int Iota(NodeContext& ctx, int64_t n) {
  std::vector<int32_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 0);
  return ctx.ConstI32({n}, v);
}

// A scalar of `dtype` holding `value` (the padding's fill).
int ScalarOf(NodeContext& ctx, ir::DType dtype, double value) {
  auto& b = ctx.b();
  switch (dtype) {
    case tfl::TensorType_FLOAT32: return ctx.ScalarF32(static_cast<float>(value));
    case tfl::TensorType_INT32: {
      const double clamped = std::clamp(value, static_cast<double>(INT32_MIN), static_cast<double>(INT32_MAX));
      return ctx.ConstI32({}, {static_cast<int32_t>(clamped)});
    }
    case tfl::TensorType_BOOL: return b.ConstBool("fill", {}, {value != 0});
    default: ctx.Fail(fmt::format("a padded {} value is not converted", ir::DTypeName(dtype)));
  }
}

// bool [bound]: position < count.
int ValidMaskOf(NodeContext& ctx, int count, int64_t bound) { return ctx.b().Less(Iota(ctx, bound), count); }

// The mask shaped to broadcast along `axis` of a rank-`rank` tensor.
int MaskAlong(NodeContext& ctx, int count, int64_t bound, int rank, int axis) {
  Dims shape(static_cast<size_t>(rank), 1);
  shape[static_cast<size_t>(axis)] = bound;
  const int mask = ValidMaskOf(ctx, count, bound);
  return rank == 1 ? mask : ctx.b().Reshape(mask, ToShape32(shape));
}

// Tensor `x` (ONNX layout, shape `shape`) with its rows past the count set to `fill`.
int FillPast(NodeContext& ctx, int x, const Dims& shape, const ValidRows& rows, double fill) {
  const int mask = MaskAlong(ctx, rows.count, shape[rows.axis], static_cast<int>(shape.size()), rows.axis);
  return ctx.b().SelectV2(mask, x, ScalarOf(ctx, ctx.b().tensor(x).dtype, fill));
}

// A run-time integer input as an int32 scalar graph tensor.
int ScalarI32(NodeContext& ctx, int i) {
  int t = ctx.Tensor(i);
  if (ctx.b().tensor(t).dtype != tfl::TensorType_INT32) t = ctx.b().Cast(t, tfl::TensorType_INT32);
  return ctx.b().Reshape(t, {});
}

// What input i can be, per element: exact for constants, its ranges for
// integers from counts, nothing for anything else.
std::vector<IntRange> RangesOf(NodeContext& ctx, int i) {
  if (!ctx.Has(i)) return {};
  if (ctx.IsConst(i)) {
    const ir::DType t = ctx.Const(i).dtype;
    if (t != tfl::TensorType_INT64 && t != tfl::TensorType_INT32) return {};
    std::vector<IntRange> out;
    for (int64_t v : ctx.ConstInts(i)) out.push_back({v, v});
    return out;
  }
  return V(ctx, i).ranges;
}

double Lowest(ir::DType t) {
  return t == tfl::TensorType_FLOAT32 ? -std::numeric_limits<double>::infinity() : static_cast<double>(INT32_MIN);
}
double Highest(ir::DType t) {
  return t == tfl::TensorType_FLOAT32 ? std::numeric_limits<double>::infinity() : static_cast<double>(INT32_MAX);
}

// ---------------------------------------------------------------- ranges

IntRange Hull(const std::vector<IntRange>& r) {
  IntRange h{std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()};
  for (const IntRange& x : r) h = {std::min(h.lo, x.lo), std::max(h.hi, x.hi)};
  return h;
}

// Elementwise interval arithmetic; operands of different sizes meet as hulls.
std::vector<IntRange> Combine(const std::vector<IntRange>& a, const std::vector<IntRange>& b, size_t out_elements,
                              const std::function<IntRange(IntRange, IntRange)>& f) {
  std::vector<IntRange> out;
  const bool aligned = a.size() == b.size() && a.size() == out_elements;
  for (size_t e = 0; e < out_elements; ++e) {
    const IntRange x = a.size() == out_elements ? a[e] : Hull(a);
    const IntRange y = b.size() == out_elements || aligned ? b[e] : Hull(b);
    out.push_back(f(x, y));
  }
  return out;
}

IntRange Span(std::initializer_list<int64_t> v) { return {std::min(v), std::max(v)}; }

void RangedArithmetic(NodeContext& ctx) {
  Normal(ctx);
  const std::string& op = ctx.node().op_type;
  if (op == "Identity" || op == "Cast" || op == "Neg" || op == "Abs" || op == "Floor" || op == "Ceil") {
    std::vector<IntRange> r = RangesOf(ctx, 0);
    const ir::DType to = Output(ctx, 0).dtype;
    if (to != tfl::TensorType_INT32 && to != tfl::TensorType_INT64) return;
    if (op == "Neg")
      for (IntRange& x : r) x = {-x.hi, -x.lo};
    if (op == "Abs")
      for (IntRange& x : r) x = x.lo >= 0 ? x : IntRange{0, std::max(-x.lo, x.hi)};
    ctx.SetRanges(0, r);
    return;
  }
  static const std::set<std::string> kBinary = {"Add", "Sub", "Mul", "Min", "Max", "Div"};
  if (!kBinary.count(op)) return;  // anything else of a count is data, not a size
  std::vector<IntRange> acc = RangesOf(ctx, 0);
  if (acc.empty()) return;
  const size_t n = static_cast<size_t>(NumElements(Output(ctx, 0).shape));
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    const std::vector<IntRange> next = RangesOf(ctx, i);
    if (next.empty()) return;  // a plain run-time operand: the result is data, not a size
    std::function<IntRange(IntRange, IntRange)> f;
    if (op == "Add") f = [](IntRange x, IntRange y) { return IntRange{x.lo + y.lo, x.hi + y.hi}; };
    if (op == "Sub") f = [](IntRange x, IntRange y) { return IntRange{x.lo - y.hi, x.hi - y.lo}; };
    if (op == "Mul")
      f = [](IntRange x, IntRange y) { return Span({x.lo * y.lo, x.lo * y.hi, x.hi * y.lo, x.hi * y.hi}); };
    if (op == "Min") f = [](IntRange x, IntRange y) { return IntRange{std::min(x.lo, y.lo), std::min(x.hi, y.hi)}; };
    if (op == "Max") f = [](IntRange x, IntRange y) { return IntRange{std::max(x.lo, y.lo), std::max(x.hi, y.hi)}; };
    if (op == "Div")
      f = [](IntRange x, IntRange y) {
        if (!y.exact() || y.lo <= 0)
          return IntRange{std::numeric_limits<int64_t>::min() / 4, std::numeric_limits<int64_t>::max() / 4};
        return IntRange{x.lo / y.lo, x.hi / y.lo};
      };
    if (!f) return;  // comparisons and the like: a plain run-time value
    acc = Combine(acc, next, n, f);
  }
  if (acc.size() == n) ctx.SetRanges(0, acc);
}

// ---------------------------------------------------------------- carried counts

// Ops that keep the rows where they are: elementwise over the padded value
// (its rows line up with the output's trailing axes).
void Elementwise(NodeContext& ctx) {
  const int p = FirstPadded(ctx);
  if (p < 0) return RangedArithmetic(ctx);
  Normal(ctx);
  const ValidRows rows = *V(ctx, p).rows;
  for (int k = 0; k < ctx.num_outputs(); ++k) {
    if (!ctx.HasOutput(k)) continue;
    const int out_rank = static_cast<int>(Output(ctx, k).shape.size());
    ctx.SetRows(k, {rows.axis + out_rank - ctx.Rank(p), rows.count});
  }
}

// The output axis each input axis lands on, for ops that only move axes.
void Moved(NodeContext& ctx, const std::function<int(int)>& axis_after) {
  Normal(ctx);
  if (!PaddedIn(ctx, 0)) {
    ctx.SetRanges(0, RangesOf(ctx, 0));  // same elements, same order
    return;
  }
  const ValidRows rows = *V(ctx, 0).rows;
  const int axis = axis_after(rows.axis);
  if (axis < 0) ctx.Fail("it removes or merges the axis whose length depends on the data");
  for (int k = 0; k < ctx.num_outputs(); ++k) ctx.SetRows(k, {axis, rows.count});
}

std::vector<int64_t> AxesInput(NodeContext& ctx, const char* attribute) {
  if (ctx.HasAttr(attribute)) return ctx.Ints(attribute);
  if (ctx.Has(1)) return ctx.ConstInts(1);
  return {};
}

void Transpose(NodeContext& ctx) {
  std::vector<int64_t> perm = ctx.Ints("perm");
  if (perm.empty())
    for (int i = ctx.Rank(0) - 1; i >= 0; --i) perm.push_back(i);
  Moved(ctx, [&](int a) { return static_cast<int>(std::find(perm.begin(), perm.end(), a) - perm.begin()); });
}

void Squeeze(NodeContext& ctx) {
  std::vector<int> gone;
  for (int64_t a : AxesInput(ctx, "axes")) gone.push_back(NormalizeAxis(a, ctx.Rank(0), ctx.node().Label()));
  if (gone.empty())
    for (int a = 0; a < ctx.Rank(0); ++a)
      if (ctx.Shape(0)[a] == 1) gone.push_back(a);
  Moved(ctx, [&](int a) {
    if (std::count(gone.begin(), gone.end(), a)) return -1;
    return a - static_cast<int>(std::count_if(gone.begin(), gone.end(), [&](int g) { return g < a; }));
  });
}

void Unsqueeze(NodeContext& ctx) {
  const int out_rank = ctx.Rank(0) + static_cast<int>(AxesInput(ctx, "axes").size());
  std::vector<int> added;
  for (int64_t a : AxesInput(ctx, "axes")) added.push_back(NormalizeAxis(a, out_rank, ctx.node().Label()));
  Moved(ctx, [&](int a) {
    int seen = -1;
    for (int j = 0; j < out_rank; ++j)
      if (!std::count(added.begin(), added.end(), j) && ++seen == a) return j;
    return -1;
  });
}

// Reshape and Flatten keep the padded axis when it survives whole: the same
// number of elements before it, and its bound as one output dimension.
void Reshape(NodeContext& ctx) {
  const Dims in = ctx.Shape(0);
  if (ctx.node().op_type == "Reshape" && !ctx.IsConst(1)) {
    // A shape computed from a count (x.reshape(n, -1) after a selection):
    // its one inexact element is the padded axis, at its bound.
    const std::vector<IntRange> r = RangesOf(ctx, 1);
    int at = -1;
    Dims dims;
    for (size_t j = 0; j < r.size(); ++j) {
      dims.push_back(r[j].hi);
      if (!r[j].exact()) at = at < 0 ? static_cast<int>(j) : -2;
    }
    if (r.empty() || at < 0 || !PaddedIn(ctx, 0))
      ctx.Fail("the new shape is computed at run time, not from one length that depends on the data");
    const ValidRows rows = *V(ctx, 0).rows;
    int64_t before_in = 1, before_out = 1;
    for (int i = 0; i < rows.axis; ++i) before_in *= in[i];
    for (int j = 0; j < at; ++j) before_out *= dims[j];
    if (std::count(dims.begin(), dims.end(), -1) == 1 || NumElements(dims) != NumElements(in) ||
        before_in != before_out || dims[at] != in[rows.axis])
      ctx.Fail("the new shape does not keep the rows whose count depends on the data whole");
    ctx.Out(0, ctx.b().Reshape(ctx.Tensor(0), ToShape32(dims)));
    ctx.SetRows(0, {at, rows.count});
    return;
  }
  Moved(ctx, [&](int a) {
    const Dims& out = Output(ctx, 0).shape;
    int64_t before = 1;
    for (int i = 0; i < a; ++i) before *= in[i];
    int64_t seen = 1;
    for (size_t j = 0; j < out.size(); ++j) {
      if (seen == before && out[j] == in[a]) return static_cast<int>(j);
      seen *= out[j];
    }
    return -1;
  });
}

void Split(NodeContext& ctx) {
  const int axis = NormalizeAxis(ctx.Int("axis", 0), ctx.Rank(0), ctx.node().Label());
  Moved(ctx, [&](int a) { return a == axis ? -1 : a; });
}

// A Shape of a padded value: its count where the padded axis is.
void Shape(NodeContext& ctx) {
  if (!PaddedIn(ctx, 0)) return Normal(ctx);
  const Dims& shape = ctx.Shape(0);
  const int rank = static_cast<int>(shape.size());
  const auto clampi = [&](int64_t v) { return static_cast<int>(std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank)); };
  const int start = clampi(ctx.Int("start", 0));
  const int end = ctx.HasAttr("end") ? clampi(ctx.Int("end", rank)) : rank;
  const ValidRows rows = *V(ctx, 0).rows;
  auto& b = ctx.b();
  std::vector<int> pieces;
  std::vector<IntRange> ranges;
  std::vector<int32_t> run;
  const auto flush = [&] {
    if (!run.empty()) pieces.push_back(ctx.ConstI32({static_cast<int64_t>(run.size())}, run));
    run.clear();
  };
  for (int a = start; a < end; ++a) {
    if (a == rows.axis) {
      flush();
      pieces.push_back(b.Reshape(rows.count, {1}));
      ranges.push_back({0, shape[a]});
    } else {
      run.push_back(static_cast<int32_t>(shape[a]));
      ranges.push_back({shape[a], shape[a]});
    }
  }
  flush();
  if (pieces.empty()) ctx.Fail("an empty slice of a shape");
  const int out =
      pieces.size() == 1 ? b.Reshape(pieces[0], {static_cast<int32_t>(ranges.size())}) : b.Concatenation(pieces, 0);
  ctx.Out(0, out);
  ctx.SetRanges(0, ranges);
}

void Gather(NodeContext& ctx) {
  const int rank = ctx.Rank(0);
  const int axis = NormalizeAxis(ctx.Int("axis", 0), rank, ctx.node().Label());
  const bool data_padded = PaddedIn(ctx, 0), index_padded = PaddedIn(ctx, 1);
  Normal(ctx);
  if (!data_padded && !index_padded) {
    // A shape vector's elements picked by constant indices.
    const std::vector<IntRange> r = RangesOf(ctx, 0);
    if (r.empty() || rank != 1 || !ctx.IsConst(1)) return;
    std::vector<IntRange> picked;
    for (int64_t i : ctx.ConstInts(1)) picked.push_back(r.at(static_cast<size_t>(i < 0 ? i + ctx.Shape(0)[0] : i)));
    ctx.SetRanges(0, picked);
    return;
  }
  if (data_padded && index_padded && V(ctx, 0).rows->axis != axis)
    ctx.Fail("both the data and the indices have lengths that depend on the data");
  if (index_padded) {
    ctx.SetRows(0, {axis + V(ctx, 1).rows->axis, V(ctx, 1).rows->count});
    return;
  }
  const ValidRows rows = *V(ctx, 0).rows;
  if (rows.axis == axis) return;  // valid indices into the valid rows: a static result
  ctx.SetRows(0, {rows.axis < axis ? rows.axis : rows.axis - 1 + ctx.Rank(1), rows.count});
}

void GatherND(NodeContext& ctx) {
  if (PaddedIn(ctx, 0)) ctx.Fail("gathering from a value whose length depends on the data is not converted");
  if (ctx.Int("batch_dims", 0) != 0) ctx.Fail("batch_dims with indices whose length depends on the data");
  const ValidRows rows = *V(ctx, 1).rows;
  if (rows.axis >= ctx.Rank(1) - 1) ctx.Fail("the padded axis is the index tuple's");
  Normal(ctx);
  ctx.SetRows(0, rows);
}

// Constant parts (the labels ConstantOfShape fills per class) joined along
// their first axis at convert time, so what reads them is linted as reading
// a constant table; -1 when a part is computed or the axis is another.
int ConcatenatedConstants(NodeContext& ctx, const std::vector<int>& parts, int axis) {
  auto& b = ctx.b();
  if (axis != 0) return -1;
  std::vector<uint8_t> bytes;
  std::vector<int32_t> shape = b.tensor(parts[0]).shape;
  shape[0] = 0;
  for (int t : parts) {
    const ir::Tensor& part = b.tensor(t);
    if (!part.is_const() || !part.quant.empty() || part.sparsity || part.dtype != b.tensor(parts[0]).dtype) return -1;
    bytes.insert(bytes.end(), part.data->data(), part.data->data() + part.data->size());
    shape[0] += part.shape.at(0);
  }
  const ir::DType dtype = b.tensor(parts[0]).dtype;
  return b.Const("joined", dtype, shape, Bytes::Own(std::move(bytes)));
}

// Concatenation along the padded axis compacts the valid rows to the front:
// a TOPK_V2 over keys that rank each valid row by its position above every
// padding row. Along another axis, the rows line up.
void Concat(NodeContext& ctx) {
  const int rank = ctx.Rank(0);
  const int axis = NormalizeAxis(ctx.Int("axis", 0), rank, ctx.node().Label());
  const int p = FirstPadded(ctx);
  if (p < 0) {
    Normal(ctx);
    std::vector<IntRange> all;
    for (int i = 0; i < ctx.num_inputs(); ++i) {
      const std::vector<IntRange> r = RangesOf(ctx, i);
      if (r.empty() || rank != 1) return;
      all.insert(all.end(), r.begin(), r.end());
    }
    ctx.SetRanges(0, all);
    return;
  }
  if (V(ctx, p).rows->axis != axis) {
    Normal(ctx);
    ctx.SetRows(0, *V(ctx, p).rows);
    return;
  }
  auto& b = ctx.b();
  std::vector<int> parts, masks, counts;
  bool prefix = true;  // every part before the last padded one is full
  int last_padded = -1;
  for (int i = 0; i < ctx.num_inputs(); ++i)
    if (PaddedIn(ctx, i)) last_padded = i;
  int64_t total = 0;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    const int64_t bound = ctx.Shape(i)[axis];
    if (bound == 0) continue;
    total += bound;
    parts.push_back(ctx.Tensor(i));
    const bool padded = PaddedIn(ctx, i);
    if (padded && i != last_padded) prefix = false;
    const int count = padded ? V(ctx, i).rows->count : ctx.ConstI32({}, {static_cast<int32_t>(bound)});
    counts.push_back(count);
    masks.push_back(padded ? ValidMaskOf(ctx, count, bound)
                           : b.ConstBool("all", {static_cast<int32_t>(bound)},
                                         std::vector<bool>(static_cast<size_t>(bound), true)));
  }
  int count = counts[0];
  for (size_t i = 1; i < counts.size(); ++i) count = b.Add(count, counts[i]);
  int data = parts.size() == 1 ? parts[0] : ConcatenatedConstants(ctx, parts, axis);
  if (data < 0) data = b.Concatenation(parts, axis);
  if (!prefix) {
    std::vector<int32_t> keys(static_cast<size_t>(total));
    for (int64_t j = 0; j < total; ++j) keys[j] = static_cast<int32_t>(total - j);
    const int mask = masks.size() == 1 ? masks[0] : b.Concatenation(masks, 0);
    const int ranked = b.SelectV2(mask, ctx.ConstI32({total}, keys), ctx.ConstI32({}, {0}));
    const int order = b.TopKV2(ranked, static_cast<int32_t>(total)).second;
    data = b.Gather(data, order, axis);
  }
  ctx.Out(0, data);
  ctx.SetRows(0, {axis, count});
}

void ConstantOfShape(NodeContext& ctx) {
  const std::vector<IntRange> r = RangesOf(ctx, 0);
  if (r.empty()) ctx.Fail("the shape is computed at run time from values other than lengths");
  Dims dims;
  int axis = -1;
  for (size_t j = 0; j < r.size(); ++j) {
    dims.push_back(r[j].hi);
    if (r[j].exact()) continue;
    if (axis >= 0) ctx.Fail("more than one dimension depends on the data");
    axis = static_cast<int>(j);
  }
  npy::Array value;
  if (ctx.HasAttr("value")) value = ctx.TensorAttr("value");
  auto& b = ctx.b();
  // The filled bound as a constant: what reads it (a Gather of labels at
  // selected rows) is linted as reading a constant table from the start.
  const int64_t n = NumElements(dims);
  if (n > (int64_t{1} << 24)) ctx.Fail(fmt::format("{} elements are too many to fill here", n));
  int out;
  if (value.data.empty() || value.dtype == tfl::TensorType_FLOAT32) {
    const float v = value.data.empty() ? 0.0f : value.as<float>()[0];
    out = ctx.ConstF32(dims, std::vector<float>(static_cast<size_t>(n), v));
  } else if (value.dtype == tfl::TensorType_INT64 || value.dtype == tfl::TensorType_INT32) {
    const int64_t v = value.dtype == tfl::TensorType_INT64 ? value.as<int64_t>()[0] : value.as<int32_t>()[0];
    out = ctx.ConstI32(dims, std::vector<int32_t>(static_cast<size_t>(n), static_cast<int32_t>(v)));
  } else {
    ctx.Fail(fmt::format("a {} fill is not converted", ir::DTypeName(value.dtype)));
  }
  ctx.Out(0, out);
  if (axis < 0) return;
  int count = b.Gather(ctx.Tensor(0), ctx.ConstI32({}, {axis}), 0);
  if (b.tensor(count).dtype != tfl::TensorType_INT32) count = b.Cast(count, tfl::TensorType_INT32);
  ctx.SetRows(0, {axis, count});
}

// TopK along the padded axis: padding pushed past every valid row, then
// TOPK_V2 of k's bound; a computed k (min(k, n)) counts the result.
void TopK(NodeContext& ctx) {
  const int rank = ctx.Rank(0);
  const int axis = NormalizeAxis(ctx.Int("axis", -1), rank, ctx.node().Label());
  const std::vector<IntRange> k_range = RangesOf(ctx, 1);
  if (k_range.size() != 1) ctx.Fail("k is computed at run time from values other than lengths");
  const bool padded = PaddedIn(ctx, 0);
  if (padded && V(ctx, 0).rows->axis != axis) {
    if (!ctx.IsConst(1)) ctx.Fail("k and the input's length both depend on the data");
    Normal(ctx);
    for (int k = 0; k < 2; ++k) ctx.SetRows(k, *V(ctx, 0).rows);
    return;
  }
  const bool largest = ctx.Int("largest", 1) != 0;
  const int64_t bound = ctx.Shape(0)[axis];
  const int64_t k_static = std::min(k_range[0].hi, bound);
  if (k_static < 1) ctx.Fail(fmt::format("k can be at most {}", k_range[0].hi));
  auto& b = ctx.b();
  int x = ctx.Tensor(0);
  const ir::DType dtype = b.tensor(x).dtype;
  if (!largest && dtype != tfl::TensorType_FLOAT32) ctx.Fail("largest=0 is only supported for float tensors");
  if (padded) x = FillPast(ctx, x, ctx.Shape(0), *V(ctx, 0).rows, largest ? Lowest(dtype) : Highest(dtype));
  std::vector<int32_t> to_last(static_cast<size_t>(rank));
  std::iota(to_last.begin(), to_last.end(), 0);
  std::rotate(to_last.begin() + axis, to_last.begin() + axis + 1, to_last.end());
  const bool move = axis != rank - 1;
  if (move) x = b.Transpose(x, to_last);
  if (!largest) x = b.Neg(x);
  auto [values, indices] = b.TopKV2(x, static_cast<int32_t>(k_static));
  if (!largest) values = b.Neg(values);
  if (move) {
    std::vector<int32_t> back(static_cast<size_t>(rank));
    for (int i = 0; i < rank; ++i) back[to_last[i]] = i;
    values = b.Transpose(values, back);
    indices = b.Transpose(indices, back);
  }
  ctx.Out(0, values);
  ctx.Out(1, indices);
  if (k_range[0].exact()) return;
  const int count = b.Minimum(ScalarI32(ctx, 1), ctx.ConstI32({}, {static_cast<int32_t>(k_static)}));
  for (int k = 0; k < 2; ++k) ctx.SetRows(k, {axis, count});
}

// Reductions: over a padded axis, padding becomes the reduction's identity.
void Reduce(NodeContext& ctx) {
  const std::string& op = ctx.node().op_type;
  const int rank = ctx.Rank(0);
  if (!PaddedIn(ctx, 0)) {
    Normal(ctx);
    const std::vector<IntRange> r = RangesOf(ctx, 0);
    if (r.empty() || NumElements(Output(ctx, 0).shape) != 1) return;
    IntRange acc = r[0];
    for (size_t e = 1; e < r.size(); ++e) {
      if (op == "ReduceMin") acc = {std::min(acc.lo, r[e].lo), std::min(acc.hi, r[e].hi)};
      if (op == "ReduceMax") acc = {std::max(acc.lo, r[e].lo), std::max(acc.hi, r[e].hi)};
      if (op == "ReduceSum") acc = {acc.lo + r[e].lo, acc.hi + r[e].hi};
      if (op == "ReduceProd") acc = Span({acc.lo * r[e].lo, acc.lo * r[e].hi, acc.hi * r[e].lo, acc.hi * r[e].hi});
    }
    if (op == "ReduceProd" && Hull(r).lo < 0) return;
    ctx.SetRanges(0, {acc});
    return;
  }
  std::vector<int> axes;
  for (int64_t a : AxesInput(ctx, "axes")) axes.push_back(NormalizeAxis(a, rank, ctx.node().Label()));
  if (axes.empty() && ctx.Int("noop_with_empty_axes", 0) == 0) {
    axes.resize(static_cast<size_t>(rank));
    std::iota(axes.begin(), axes.end(), 0);
  }
  const ValidRows rows = *V(ctx, 0).rows;
  const bool keep = ctx.Int("keepdims", 1) != 0;
  if (!std::count(axes.begin(), axes.end(), rows.axis)) {
    Normal(ctx);
    const int before = static_cast<int>(std::count_if(axes.begin(), axes.end(), [&](int a) { return a < rows.axis; }));
    ctx.SetRows(0, {keep ? rows.axis : rows.axis - before, rows.count});
    return;
  }
  const ir::DType dtype = V(ctx, 0).dtype;
  double identity;
  if (op == "ReduceMax")
    identity = Lowest(dtype);
  else if (op == "ReduceMin")
    identity = Highest(dtype);
  else if (op == "ReduceSum")
    identity = 0;
  else if (op == "ReduceProd")
    identity = 1;
  else
    ctx.Fail("over an axis whose length depends on the data");
  const std::string masked = ctx.node().outputs.at(0) + "|padding filled";
  ctx.Define(masked, FillPast(ctx, ctx.Tensor(0), ctx.Shape(0), rows, identity));
  Node inner = ctx.node();
  inner.inputs[0] = masked;
  ctx.LowerNode(inner);
}

// Slice of the padded axis from a constant start: the count follows.
void Slice(NodeContext& ctx) {
  if (!PaddedIn(ctx, 0)) return Normal(ctx);
  for (int i = 1; i < ctx.num_inputs(); ++i)
    if (ctx.Has(i) && !ctx.IsConst(i)) ctx.Fail("its bounds are computed at run time");
  const ValidRows rows = *V(ctx, 0).rows;
  const std::vector<int64_t> starts = ctx.ConstInts(1), ends = ctx.ConstInts(2);
  std::vector<int64_t> axes = ctx.Has(3) ? ctx.ConstInts(3) : std::vector<int64_t>{};
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  const std::vector<int64_t> steps = ctx.Has(4) ? ctx.ConstInts(4) : std::vector<int64_t>(starts.size(), 1);
  Normal(ctx);
  for (size_t i = 0; i < axes.size(); ++i) {
    if (NormalizeAxis(axes[i], ctx.Rank(0), ctx.node().Label()) != rows.axis) continue;
    if (steps[i] != 1 || starts[i] < 0 || ends[i] < 0)
      ctx.Fail("it slices the padded axis with a step or from its end");
    auto& b = ctx.b();
    const int64_t bound = ctx.Shape(0)[rows.axis];
    int count = b.Minimum(rows.count, ctx.ConstI32({}, {static_cast<int32_t>(std::min(ends[i], bound))}));
    if (starts[i] > 0) count = b.Sub(count, ctx.ConstI32({}, {static_cast<int32_t>(std::min(starts[i], bound))}));
    count = b.Maximum(count, ctx.ConstI32({}, {0}));
    if (Output(ctx, 0).shape[rows.axis] == 0) ctx.Fail("the slice keeps none of the padded axis's bound");
    ctx.SetRows(0, {rows.axis, count});
    return;
  }
  ctx.SetRows(0, rows);
}

// Where between two branches of an If: a branch that gives no rows (an empty
// tensor) or fewer is padded to the other's bound; the count is selected too.
void Where(NodeContext& ctx) {
  int axis = -1;
  for (int i = 1; i <= 2; ++i)
    if (PaddedIn(ctx, i)) axis = V(ctx, i).rows->axis;
  if (axis < 0 || PaddedIn(ctx, 0)) return Elementwise(ctx);
  if (ctx.Rank(1) != ctx.Rank(2)) ctx.Fail("its branches differ in rank");
  int64_t bound = 0;
  for (int i = 1; i <= 2; ++i) bound = std::max(bound, ctx.Shape(i)[axis]);
  auto& b = ctx.b();
  std::vector<int> data, counts;
  for (int i = 1; i <= 2; ++i) {
    Dims shape = ctx.Shape(i);
    for (int a = 0; a < ctx.Rank(i); ++a)
      if (a != axis && shape[a] != ctx.Shape(3 - i)[a]) ctx.Fail("its branches differ off the padded axis");
    const int64_t have = shape[axis];
    counts.push_back(PaddedIn(ctx, i) ? V(ctx, i).rows->count : ctx.ConstI32({}, {static_cast<int32_t>(have)}));
    if (have == bound) {
      data.push_back(ctx.Tensor(i));
      continue;
    }
    shape[axis] = bound;
    const int zeros = ScalarOf(ctx, V(ctx, i).dtype, 0);
    const int filler = b.Op(tfl::BuiltinOperator_BROADCAST_TO,
                            {zeros, ctx.ConstI32({static_cast<int64_t>(shape.size())}, ToShape32(shape))})[0];
    if (have == 0) {
      data.push_back(filler);
      continue;
    }
    builder::Paddings pads(shape.size(), {0, 0});
    pads[static_cast<size_t>(axis)][1] = static_cast<int32_t>(bound - have);
    data.push_back(b.Pad(ctx.Tensor(i), pads));
  }
  if (ctx.Shape(0).size() > 0 && NumElements(ctx.Shape(0)) != 1)
    ctx.Fail("its condition is not one value while a branch's length depends on the data");
  const int condition = b.Reshape(ctx.Tensor(0), {});
  ctx.Out(0, b.SelectV2(condition, data[0], data[1]));
  ctx.SetRows(0, {axis, b.SelectV2(condition, counts[0], counts[1])});
}

// NonMaxSuppression of one batch and one class (torchvision's batched_nms
// offsets the boxes per class instead): NON_MAX_SUPPRESSION_V4 on [N, 4]
// boxes, padding scored below any threshold. Output rows [0, 0, index].
// LiteRT suppresses at IoU >= threshold, onnxruntime above it: they differ
// only on an exact tie.
void NonMaxSuppression(NodeContext& ctx) {
  if (ctx.Int("center_point_box", 0) != 0) ctx.Fail("center_point_box=1 is not converted");
  if (ctx.Rank(0) != 3 || ctx.Rank(1) != 3 || ctx.Shape(0)[2] != 4)
    ctx.BadModel("boxes must be [B, N, 4], scores [B, C, N]");
  if (ctx.Shape(0)[0] != 1 || ctx.Shape(1)[0] != 1 || ctx.Shape(1)[1] != 1)
    ctx.Fail("more than one batch or class is not converted (offset the boxes per class, as torchvision does)");
  for (int i = 2; i <= 4; ++i)
    if (ctx.Has(i) && !ctx.IsConst(i)) ctx.Fail(fmt::format("input {} is computed at run time", i));
  const int64_t n = ctx.Shape(0)[1];
  if (ctx.Shape(1)[2] != n) ctx.BadModel("scores do not match boxes");
  const int64_t asked = ctx.Has(2) ? ctx.ConstInts(2).at(0) : 0;
  if (asked <= 0) ctx.Fail("max_output_boxes_per_class is 0: the output is always empty");
  const int64_t max_output = std::min(asked, n);
  const float iou = ctx.Has(3) ? ctx.ConstFloats(3).at(0) : 0.0f;
  const float score_threshold = ctx.Has(4) ? ctx.ConstFloats(4).at(0) : std::numeric_limits<float>::lowest();
  auto& b = ctx.b();
  const int boxes = b.Reshape(ctx.Tensor(0), {static_cast<int32_t>(n), 4});
  int scores = b.Reshape(ctx.Tensor(1), {static_cast<int32_t>(n)});
  std::optional<ValidRows> rows;
  if (PaddedIn(ctx, 0)) rows = ValidRows{0, V(ctx, 0).rows->count};
  if (PaddedIn(ctx, 1)) rows = ValidRows{0, V(ctx, 1).rows->count};
  if (rows) scores = FillPast(ctx, scores, {n}, *rows, -std::numeric_limits<double>::infinity());
  const auto [kept, count] =
      b.NonMaxSuppressionV4(boxes, scores, static_cast<int32_t>(max_output), iou, score_threshold);
  const int column = b.Reshape(kept, {static_cast<int32_t>(max_output), 1});
  const int zeros = ctx.ConstI32({max_output, 2}, std::vector<int32_t>(static_cast<size_t>(max_output) * 2, 0));
  ctx.Out(0, b.Concatenation({zeros, column}, 1));
  ctx.SetRows(0, {0, count});
}

}  // namespace padded

// NonZero of a run-time tensor: [rank, bound] coordinates, the non-zero
// elements' first in row-major order.
void LowerNonZeroPadded(NodeContext& ctx) {
  using namespace padded;
  const Dims shape = ctx.Shape(0);
  const int rank = static_cast<int>(shape.size());
  if (rank == 0) ctx.Fail("NonZero of a scalar computed at run time is not converted");
  const int64_t n = NumElements(shape);
  if (n < 1 || n * rank > (int64_t{1} << 24)) ctx.Fail(fmt::format("{} elements are too many to index here", n));
  auto& b = ctx.b();
  int flat = b.Reshape(ctx.Tensor(0), {static_cast<int32_t>(n)});
  const ir::DType dtype = b.tensor(flat).dtype;
  const int mask = dtype == tfl::TensorType_BOOL ? flat : b.NotEqual(flat, ScalarOf(ctx, dtype, 0));
  std::vector<int32_t> keys(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) keys[j] = static_cast<int32_t>(n - j);
  const int ranked = b.SelectV2(mask, ctx.ConstI32({n}, keys), ctx.ConstI32({}, {0}));
  const int order = b.TopKV2(ranked, static_cast<int32_t>(n)).second;
  const int count = b.Sum(b.Cast(mask, tfl::TensorType_INT32), {0}, false);
  int coords;
  if (rank == 1) {
    coords = b.Reshape(order, {1, static_cast<int32_t>(n)});
  } else {
    std::vector<int32_t> table(static_cast<size_t>(n * rank));
    for (int64_t e = 0; e < n; ++e) {
      int64_t rest = e;
      for (int d = rank - 1; d >= 0; --d) {
        table[static_cast<size_t>(e * rank + d)] = static_cast<int32_t>(rest % shape[d]);
        rest /= shape[d];
      }
    }
    coords = b.Transpose(b.Gather(ctx.ConstI32({n, rank}, table), order, 0), {1, 0});
  }
  ctx.Out(0, coords);
  ctx.SetRows(0, {1, count});
}

void RegisterDataDependent(Registry& r) { r.Add("NonMaxSuppression", padded::NonMaxSuppression); }

}  // namespace ops

const Registry& PaddedRules() {
  static const Registry registry = [] {
    Registry r;
    using namespace ops::padded;
    for (const char* op : {"Add",         "Sub",       "Mul",      "Div",         "Min",
                           "Max",         "Cast",      "Identity", "Neg",         "Abs",
                           "Floor",       "Ceil",      "Relu",     "Sigmoid",     "Exp",
                           "Log",         "Sqrt",      "Clip",     "Not",         "And",
                           "Or",          "Equal",     "Greater",  "Less",        "GreaterOrEqual",
                           "LessOrEqual", "Round",     "Tanh",     "HardSigmoid", "Reciprocal",
                           "Xor",         "Mod",       "Sign",     "Pow",         "Erf",
                           "Softplus",    "LeakyRelu", "Elu",      "HardSwish"})
      r.Add(op, Elementwise);
    r.Add("Where", Where);
    r.Add("Transpose", Transpose);
    r.Add("Squeeze", Squeeze);
    r.Add("Unsqueeze", Unsqueeze);
    r.Add("Reshape", Reshape);
    r.Add("Flatten", Reshape);
    r.Add("Split", Split);
    r.Add("Shape", Shape);
    r.Add("Gather", Gather);
    r.Add("GatherND", GatherND);
    r.Add("Concat", Concat);
    r.Add("ConstantOfShape", ConstantOfShape);
    r.Add("TopK", TopK);
    for (const char* op : {"ReduceMax", "ReduceMin", "ReduceSum", "ReduceProd", "ReduceMean"}) r.Add(op, Reduce);
    r.Add("Slice", Slice);
    r.Add("NonMaxSuppression", NonMaxSuppression);
    return r;
  }();
  return registry;
}

bool ReadsDataDependentLength(const std::map<std::string, Value>& values, const Node& node) {
  for (const std::string& in : node.inputs) {
    if (in.empty()) continue;
    const auto it = values.find(in);
    if (it != values.end() && (it->second.rows || !it->second.ranges.empty())) return true;
  }
  return false;
}

}  // namespace gpuclean::onnx
