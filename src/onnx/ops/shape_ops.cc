// Shape, data-movement and constant ops. Most of them only ever see
// constants in exported models (shape arithmetic) and are folded; the rest
// move data in whatever layout their input is stored in where they can:
// Transpose emits nothing (it changes the value's layout), Reshape and
// Squeeze read a transposed input directly when the order of its non-unit
// dimensions allows, Concat/Split/Slice/Pad remap their axes.
#include <algorithm>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "onnx/ops/ops.h"

namespace gpuclean::onnx::ops {
namespace {

npy::Array Int64Array(const Dims& shape, const std::vector<int64_t>& values) {
  npy::Array a;
  a.dtype = tfl::TensorType_INT64;
  a.shape = shape;
  a.data.resize(values.size() * 8);
  if (!values.empty()) std::memcpy(a.data.data(), values.data(), a.data.size());
  return a;
}

ir::DType DTypeOfOnnx(NodeContext& ctx, int64_t to) {
  switch (to) {
    case 1: return tfl::TensorType_FLOAT32;
    case 2: return tfl::TensorType_UINT8;
    case 3: return tfl::TensorType_INT8;
    case 5: return tfl::TensorType_INT16;
    case 6: return tfl::TensorType_INT32;
    case 7: return tfl::TensorType_INT64;
    case 9: return tfl::TensorType_BOOL;
    case 10: return tfl::TensorType_FLOAT16;
    case 11: return tfl::TensorType_FLOAT64;
    case 16: return tfl::TensorType_BFLOAT16;
    default: ctx.Fail(fmt::format("Cast to ONNX data type {} is not supported", to));
  }
}

ir::DType Stored(ir::DType d) {
  switch (d) {
    case tfl::TensorType_INT64: return tfl::TensorType_INT32;
    case tfl::TensorType_FLOAT16:
    case tfl::TensorType_BFLOAT16:
    case tfl::TensorType_FLOAT64: return tfl::TensorType_FLOAT32;
    default: return d;
  }
}

// A half-precision type is stored as float32. Its values are rounded here
// only in the proof's half-storage variant (LowerOptions::round_half_values):
// onnxruntime's CPU provider drops f32->f16->f32 Cast pairs.
bool IsHalfType(ir::DType d) { return d == tfl::TensorType_FLOAT16 || d == tfl::TensorType_BFLOAT16; }

void CastTo(NodeContext& ctx, ir::DType to) {
  const Perm perm = ctx.PermOf(0);
  const int x = ctx.TensorIn(0, perm);
  auto& b = ctx.b();
  const ir::DType stored = Stored(to);
  if (IsHalfType(to) && ctx.RoundsHalfValues()) {
    ctx.Out(0, b.Cast(b.Cast(x, to), stored), perm);
    return;
  }
  if (b.tensor(x).dtype == stored) {  // nothing to convert: the value itself, as Identity
    ctx.Out(0, x, perm);
    return;
  }
  ctx.Out(0, b.Cast(x, stored), perm);
}

void ReshapeTo(NodeContext& ctx, const Dims& shape) {
  if (NumElements(shape) != NumElements(ctx.Shape(0)))
    ctx.BadModel(
        fmt::format("cannot reshape {} elements to {} elements", NumElements(ctx.Shape(0)), NumElements(shape)));
  Perm perm;
  const int y = ctx.Reshaped(0, shape, &perm);
  ctx.Out(0, y, perm);
}

void Shape(NodeContext& ctx) {
  const Dims& s = ctx.Shape(0);
  const int rank = static_cast<int>(s.size());
  int64_t start = ctx.Int("start", 0), end = ctx.Int("end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  const std::vector<int64_t> dims(s.begin() + start, s.begin() + end);
  ctx.OutConst(0, Int64Array({static_cast<int64_t>(dims.size())}, dims));
}

void Size(NodeContext& ctx) { ctx.OutConst(0, Int64Array({}, {NumElements(ctx.Shape(0))})); }

void Constant(NodeContext& ctx) {
  if (ctx.HasAttr("value")) {
    npy::Array a = ctx.TensorAttr("value");
    ctx.OutConst(0, std::move(a));
  } else if (ctx.HasAttr("value_float")) {
    const float v = ctx.Float("value_float", 0);
    npy::Array a;
    a.dtype = tfl::TensorType_FLOAT32;
    a.data.resize(4);
    std::memcpy(a.data.data(), &v, 4);
    ctx.OutConst(0, std::move(a));
  } else if (ctx.HasAttr("value_floats")) {
    const auto v = ctx.Floats("value_floats");
    npy::Array a;
    a.dtype = tfl::TensorType_FLOAT32;
    a.shape = {static_cast<int64_t>(v.size())};
    a.data.resize(v.size() * 4);
    if (!v.empty()) std::memcpy(a.data.data(), v.data(), a.data.size());
    ctx.OutConst(0, std::move(a));
  } else if (ctx.HasAttr("value_int")) {
    ctx.OutConst(0, Int64Array({}, {ctx.Int("value_int", 0)}));
  } else if (ctx.HasAttr("value_ints")) {
    const auto v = ctx.Ints("value_ints");
    ctx.OutConst(0, Int64Array({static_cast<int64_t>(v.size())}, v));
  } else {
    ctx.Fail("only tensor, float and int constants are supported");
  }
}

void ConstantOfShape(NodeContext& ctx) {
  const Dims shape = ctx.ConstInts(0);
  for (int64_t d : shape)
    if (d < 0) ctx.BadModel("negative dimension");
  npy::Array fill;
  if (ctx.HasAttr("value")) {
    fill = ctx.TensorAttr("value");
  } else {
    fill.dtype = tfl::TensorType_FLOAT32;
    fill.data.assign(4, 0);
  }
  const size_t esize = ir::DTypeSize(fill.dtype);
  if (fill.data.size() < esize) ctx.BadModel("the fill value is empty");
  const int64_t n = NumElements(shape);
  if (n > (int64_t{1} << 28)) ctx.Fail(fmt::format("a {}-element constant is too large to fold", n));
  npy::Array a;
  a.dtype = fill.dtype;
  a.shape = shape;
  a.data.resize(static_cast<size_t>(n) * esize);
  for (int64_t i = 0; i < n; ++i) std::memcpy(a.data.data() + i * esize, fill.data.data(), esize);
  ctx.OutConst(0, std::move(a));
}

void Reshape(NodeContext& ctx) {
  const Dims target = ctx.ConstInts(1);
  const bool allow_zero = ctx.Int("allowzero", 0) != 0;
  const Dims& in = ctx.Shape(0);
  Dims out(target.size());
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == -1) {
      if (infer >= 0) ctx.BadModel("more than one -1 in the target shape");
      infer = static_cast<int>(i);
      continue;
    }
    if (target[i] == 0 && !allow_zero) {
      if (i >= in.size()) ctx.BadModel("0 in the target shape past the input's rank");
      out[i] = in[i];
    } else if (target[i] < 0) {
      ctx.BadModel(fmt::format("negative dimension {} in the target shape", target[i]));
    } else {
      out[i] = target[i];
    }
    known *= out[i];
  }
  if (infer >= 0) {
    if (known == 0 || NumElements(in) % known != 0) ctx.BadModel("the -1 dimension cannot be inferred");
    out[infer] = NumElements(in) / known;
  }
  ReshapeTo(ctx, out);
}

void Flatten(NodeContext& ctx) {
  const Dims& in = ctx.Shape(0);
  const int rank = static_cast<int>(in.size());
  int64_t axis = ctx.Int("axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank) ctx.BadModel("axis out of range");
  int64_t outer = 1;
  for (int i = 0; i < axis; ++i) outer *= in[i];
  ReshapeTo(ctx, {outer, NumElements(in) / std::max<int64_t>(outer, 1)});
}

std::vector<int64_t> AxesOf(NodeContext& ctx, int input) {
  if (ctx.Has(input)) return ctx.ConstInts(input);
  return ctx.Ints("axes", {});
}

void Squeeze(NodeContext& ctx) {
  const Dims& in = ctx.Shape(0);
  const int rank = static_cast<int>(in.size());
  auto axes = AxesOf(ctx, 1);
  std::vector<bool> drop(rank, false);
  if (axes.empty()) {
    for (int i = 0; i < rank; ++i) drop[i] = in[i] == 1;
  } else {
    for (int64_t a : axes) {
      const int ax = NormalizeAxis(a, rank, ctx.node().Label());
      if (in[ax] != 1) ctx.BadModel(fmt::format("cannot squeeze axis {} of size {}", ax, in[ax]));
      drop[ax] = true;
    }
  }
  Dims out;
  for (int i = 0; i < rank; ++i)
    if (!drop[i]) out.push_back(in[i]);
  ReshapeTo(ctx, out);
}

void Unsqueeze(NodeContext& ctx) {
  const Dims& in = ctx.Shape(0);
  auto axes = AxesOf(ctx, 1);
  const int rank = static_cast<int>(in.size() + axes.size());
  std::vector<bool> added(rank, false);
  for (int64_t a : axes) {
    const int ax = NormalizeAxis(a, rank, ctx.node().Label());
    if (added[ax]) ctx.BadModel("repeated axis");
    added[ax] = true;
  }
  Dims out;
  size_t k = 0;
  for (int i = 0; i < rank; ++i) out.push_back(added[i] ? 1 : in.at(k++));
  ReshapeTo(ctx, out);
}

// No op: the output is the same stored tensor, read through a new layout.
void Transpose(NodeContext& ctx) {
  const int rank = ctx.Rank(0);
  std::vector<int64_t> p = ctx.Ints("perm", {});
  if (p.empty())
    for (int i = rank - 1; i >= 0; --i) p.push_back(i);
  if (static_cast<int>(p.size()) != rank) ctx.BadModel("perm does not match the input rank");
  std::vector<bool> seen(rank, false);
  for (int64_t a : p) {
    if (a < 0 || a >= rank || seen[a]) ctx.BadModel("perm is not a permutation");
    seen[a] = true;
  }
  if (ctx.IsConst(0)) {
    ctx.OutConst(0, TransposeHost(ctx.Const(0), Perm(p.begin(), p.end())));
    return;
  }
  // out[j] = in[p[j]]; stored[i] = in[P[i]] = out[inv_p[P[i]]].
  const Perm P = ctx.PermOf(0).empty() ? IdentityPerm(rank) : ctx.PermOf(0);
  const Perm inv_p = InversePerm(Perm(p.begin(), p.end()));
  Perm out_perm(rank);
  for (int i = 0; i < rank; ++i) out_perm[i] = inv_p[P[i]];
  ctx.Out(0, ctx.TensorIn(0, P), out_perm);
}

Perm LayoutOfInputs(NodeContext& ctx, const std::vector<int>& indices) {
  for (int i : indices)
    if (!ctx.IsConst(i) && !ctx.PermOf(i).empty()) return ctx.PermOf(i);
  return {};
}

void Concat(NodeContext& ctx) {
  std::vector<int> indices;
  for (int i = 0; i < ctx.num_inputs(); ++i)
    if (ctx.Has(i) && NumElements(ctx.Shape(i)) > 0) indices.push_back(i);
  if (indices.empty()) ctx.BadModel("nothing to concatenate");
  const int rank = ctx.Rank(indices[0]);
  const int axis = NormalizeAxis(ctx.Int("axis", 0), rank, ctx.node().Label());
  const Perm perm = LayoutOfInputs(ctx, indices);
  std::vector<int> tensors;
  for (int i : indices) tensors.push_back(ctx.TensorIn(i, perm));
  int y = tensors.size() == 1 ? ctx.b().Reshape(tensors[0], ctx.b().shape(tensors[0]))
                              : ctx.b().Concatenation(tensors, StoredAxis(perm, axis));
  ctx.Out(0, y, perm);
}

void Split(NodeContext& ctx) {
  const int rank = ctx.Rank(0);
  const int axis = NormalizeAxis(ctx.Int("axis", 0), rank, ctx.node().Label());
  const int64_t dim = ctx.Shape(0)[axis];
  std::vector<int64_t> sizes = ctx.Has(1) ? ctx.ConstInts(1) : ctx.Ints("split", {});
  const int outputs = ctx.num_outputs();
  if (sizes.empty()) {
    const int64_t parts = ctx.Int("num_outputs", outputs);
    const int64_t each = (dim + parts - 1) / parts;
    for (int64_t i = 0; i < parts; ++i) sizes.push_back(std::min(each, dim - i * each));
  }
  int64_t total = 0;
  for (int64_t s : sizes) total += s;
  if (total != dim || static_cast<int>(sizes.size()) != outputs) ctx.BadModel("split sizes do not add up to the axis");
  const Perm perm = ctx.PermOf(0);
  const int x = ctx.TensorIn(0, perm);
  std::vector<int32_t> s32(sizes.begin(), sizes.end());
  if (outputs == 1) {
    ctx.Out(0, ctx.b().Reshape(x, ctx.b().shape(x)), perm);
    return;
  }
  const auto parts = ctx.b().SplitV(x, s32, StoredAxis(perm, axis));
  for (int k = 0; k < outputs; ++k) ctx.Out(k, parts[k], perm);
}

void Slice(NodeContext& ctx) {
  const Dims& in = ctx.Shape(0);
  const int rank = static_cast<int>(in.size());
  const auto starts = ctx.ConstInts(1), ends = ctx.ConstInts(2);
  std::vector<int64_t> axes = ctx.Has(3) ? ctx.ConstInts(3) : std::vector<int64_t>{};
  std::vector<int64_t> steps = ctx.Has(4) ? ctx.ConstInts(4) : std::vector<int64_t>{};
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    ctx.BadModel("starts, ends, axes and steps differ in length");
  std::vector<int64_t> begin(rank, 0), end(in.begin(), in.end()), step(rank, 1);
  std::vector<bool> end_before_zero(rank, false);
  for (size_t i = 0; i < axes.size(); ++i) {
    const int ax = NormalizeAxis(axes[i], rank, ctx.node().Label());
    const int64_t dim = in[ax];
    if (steps[i] == 0) ctx.BadModel("step 0");
    int64_t s = starts[i], e = ends[i];
    if (s < 0) s += dim;
    if (e < 0 && e > INT64_MIN / 2) e += dim;
    step[ax] = steps[i];
    if (steps[i] > 0) {
      begin[ax] = std::clamp<int64_t>(s, 0, dim);
      end[ax] = std::clamp<int64_t>(e, 0, dim);
    } else {
      begin[ax] = std::clamp<int64_t>(s, 0, dim - 1);
      end[ax] = std::clamp<int64_t>(e, -1, dim - 1);
      end_before_zero[ax] = end[ax] == -1;
    }
  }
  Dims out_shape(rank);
  for (int i = 0; i < rank; ++i) {
    const int64_t span = step[i] > 0 ? end[i] - begin[i] : begin[i] - end[i];
    out_shape[i] = span <= 0 ? 0 : (span + std::abs(step[i]) - 1) / std::abs(step[i]);
  }
  if (NumElements(out_shape) == 0) {
    // An empty constant (shape arithmetic) stays foldable; consumers that
    // skip empty inputs (Concat) take it, anything storing it refuses.
    if (!ctx.IsConst(0)) ctx.Fail("the slice is empty; empty tensors are not supported");
    npy::Array empty;
    empty.dtype = ctx.Const(0).dtype;
    empty.shape = out_shape;
    ctx.OutConst(0, std::move(empty));
    return;
  }
  bool unit = true;
  for (int64_t s : step) unit = unit && s == 1;
  // Whole axes taken forward: nothing to do. (A reversal keeps the shape too.)
  if (ctx.IsConst(0) == false && out_shape == in && unit) {
    const Perm perm = ctx.PermOf(0);
    const int x = ctx.TensorIn(0, perm);
    ctx.Out(0, ctx.b().Reshape(x, ctx.b().shape(x)), perm);
    return;
  }
  const Perm perm = ctx.PermOf(0);
  const Perm p = perm.empty() ? IdentityPerm(rank) : perm;
  const int x = ctx.TensorIn(0, perm);
  std::vector<int32_t> b32(rank), e32(rank), s32(rank), size32(rank);
  int32_t end_mask = 0;
  for (int i = 0; i < rank; ++i) {
    const int a = p[i];
    b32[i] = static_cast<int32_t>(begin[a]);
    e32[i] = static_cast<int32_t>(end[a]);
    s32[i] = static_cast<int32_t>(step[a]);
    size32[i] = static_cast<int32_t>(out_shape[a]);
    if (end_before_zero[a]) end_mask |= 1 << i;
  }
  int y;
  if (unit) {
    y = ctx.b().Slice(x, b32, size32);
  } else {
    builder::StridedSliceMasks masks;
    masks.end = end_mask;
    y = ctx.b().StridedSlice(x, b32, e32, s32, masks);
  }
  ctx.Out(0, y, perm);
}

void Gather(NodeContext& ctx) {
  const Dims& in = ctx.Shape(0);
  const int rank = static_cast<int>(in.size());
  const int axis = NormalizeAxis(ctx.Int("axis", 0), rank, ctx.node().Label());
  const Dims& index_shape = ctx.Shape(1);
  auto& b = ctx.b();
  if (ctx.IsConst(1)) {
    std::vector<int64_t> idx = ctx.ConstInts(1);
    for (int64_t& i : idx) {
      if (i < -in[axis] || i >= in[axis])
        ctx.BadModel(fmt::format("index {} is out of range for size {}", i, in[axis]));
      if (i < 0) i += in[axis];
    }
    bool contiguous = !idx.empty();
    for (size_t k = 1; k < idx.size(); ++k) contiguous = contiguous && idx[k] == idx[k - 1] + 1;
    Dims out_shape(in.begin(), in.begin() + axis);
    out_shape.insert(out_shape.end(), index_shape.begin(), index_shape.end());
    out_shape.insert(out_shape.end(), in.begin() + axis + 1, in.end());
    if (contiguous && index_shape.size() <= 1) {
      // A run of indices is a SLICE (and a reshape when the axis goes away),
      // which every GPU delegate runs; GATHER is not.
      const Perm perm = ctx.PermOf(0);
      const Perm p = perm.empty() ? IdentityPerm(rank) : perm;
      const int x = ctx.TensorIn(0, perm);
      std::vector<int32_t> begin(rank, 0), size(b.shape(x).begin(), b.shape(x).end());
      const int s = StoredAxis(perm, axis);
      begin[s] = static_cast<int32_t>(idx[0]);
      size[s] = static_cast<int32_t>(idx.size());
      int y = b.Slice(x, begin, size);
      if (index_shape.empty()) {
        // Drop the axis: reshape the stored tensor, keeping the layout of
        // the remaining axes.
        Perm out_perm;
        Dims stored_out;
        for (int i = 0; i < rank; ++i) {
          if (p[i] == axis) continue;
          out_perm.push_back(p[i] > axis ? p[i] - 1 : p[i]);
          stored_out.push_back(in[p[i]]);
        }
        y = b.Reshape(y, ToShape32(stored_out));
        ctx.Out(0, y, IsIdentity(out_perm) ? Perm{} : out_perm);
        return;
      }
      ctx.Out(0, y, perm);
      return;
    }
    // Other constant indices: one SLICE per run of consecutive indices,
    // joined by CONCATENATION on the axis - GPU delegates take both, and
    // GATHER not at all. Past kMaxRuns the concatenation costs more than a
    // host step would.
    constexpr size_t kMaxRuns = 64;
    std::vector<std::pair<int64_t, int64_t>> runs;  // (first index, length)
    for (int64_t i : idx) {
      if (!runs.empty() && runs.back().first + runs.back().second == i)
        ++runs.back().second;
      else
        runs.push_back({i, 1});
    }
    const Perm perm = ctx.PermOf(0);
    if (!idx.empty() && runs.size() <= kMaxRuns && (index_shape.size() == 1 || perm.empty())) {
      const int x = ctx.TensorIn(0, perm);
      const int s = StoredAxis(perm, axis);
      std::vector<int> pieces;
      for (const auto& [first, length] : runs) {
        std::vector<int32_t> begin(rank, 0), size(b.shape(x).begin(), b.shape(x).end());
        begin[s] = static_cast<int32_t>(first);
        size[s] = static_cast<int32_t>(length);
        pieces.push_back(b.Slice(x, begin, size));
      }
      int y = pieces.size() == 1 ? pieces[0] : b.Concatenation(pieces, s);
      if (index_shape.size() == 1) {
        ctx.Out(0, y, perm);
      } else {
        ctx.Out(0, b.Reshape(y, ToShape32(out_shape)));
      }
      return;
    }
    std::vector<int32_t> i32(idx.begin(), idx.end());
    const int indices = ctx.ConstI32(index_shape, i32);
    ctx.Out(0, b.Gather(ctx.Tensor(0), indices, axis));
    return;
  }
  // Runtime indices: negative ones wrap, as ONNX allows.
  int indices = ctx.Tensor(1);
  if (b.tensor(indices).dtype != tfl::TensorType_INT32) indices = b.Cast(indices, tfl::TensorType_INT32);
  const int size = ctx.ConstI32({}, {static_cast<int32_t>(in[axis])});
  const int zero = ctx.ConstI32({}, {0});
  indices = b.SelectV2(b.Less(indices, zero), b.Add(indices, size), indices);
  ctx.Out(0, b.Gather(ctx.Tensor(0), indices, axis));
}

void Cast(NodeContext& ctx) { CastTo(ctx, DTypeOfOnnx(ctx, ctx.Int("to", 1))); }

// CastLike: Cast to the second input's type.
void CastLike(NodeContext& ctx) { CastTo(ctx, ctx.OnnxDType(1)); }

// EyeLike: a constant (the input's shape is known at convert time): ones on
// diagonal k.
void EyeLike(NodeContext& ctx) {
  const Dims& shape = ctx.Shape(0);
  if (shape.size() != 2) ctx.BadModel("EyeLike needs a 2-D input");
  const ir::DType dtype = ctx.HasAttr("dtype") ? DTypeOfOnnx(ctx, ctx.Int("dtype", 1)) : ctx.DType(0);
  const int64_t k = ctx.Int("k", 0);
  npy::Array a;
  a.dtype = dtype;
  a.shape = shape;
  const size_t esize = ir::DTypeSize(dtype);
  a.data.assign(static_cast<size_t>(NumElements(shape)) * esize, 0);
  for (int64_t i = 0; i < shape[0]; ++i) {
    const int64_t j = i + k;
    if (j < 0 || j >= shape[1]) continue;
    uint8_t* p = a.data.data() + (i * shape[1] + j) * esize;
    switch (dtype) {
      case tfl::TensorType_FLOAT32: {
        const float one = 1;
        std::memcpy(p, &one, 4);
        break;
      }
      case tfl::TensorType_FLOAT64: {
        const double one = 1;
        std::memcpy(p, &one, 8);
        break;
      }
      case tfl::TensorType_INT32: {
        const int32_t one = 1;
        std::memcpy(p, &one, 4);
        break;
      }
      case tfl::TensorType_INT64: {
        const int64_t one = 1;
        std::memcpy(p, &one, 8);
        break;
      }
      case tfl::TensorType_INT16: {
        const int16_t one = 1;
        std::memcpy(p, &one, 2);
        break;
      }
      case tfl::TensorType_UINT8:
      case tfl::TensorType_INT8:
      case tfl::TensorType_BOOL: *p = 1; break;
      default: ctx.Fail(fmt::format("EyeLike of {} is not supported", ir::DTypeName(dtype)));
    }
  }
  ctx.OutConst(0, std::move(a));
}

// Hann/Hamming/Blackman windows: constants of the (convert-time) size.
enum class WindowKind { kHann, kHamming, kBlackman };

void WindowOp(NodeContext& ctx, WindowKind kind) {
  const int64_t n = ctx.ConstInts(0).at(0);
  if (n < 1) ctx.Fail("an empty window is not supported");
  if (n > (int64_t{1} << 24)) ctx.Fail("window too large to fold");
  const bool periodic = ctx.Int("periodic", 1) != 0;
  const ir::DType dtype = DTypeOfOnnx(ctx, ctx.Int("output_datatype", 1));
  const double d = periodic ? static_cast<double>(n) : static_cast<double>(std::max<int64_t>(n - 1, 1));
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) {
    const double t = 2.0 * M_PI * static_cast<double>(i) / d;
    switch (kind) {
      case WindowKind::kHann: v[i] = 0.5 - 0.5 * std::cos(t); break;
      case WindowKind::kHamming: v[i] = 25.0 / 46.0 - (1.0 - 25.0 / 46.0) * std::cos(t); break;
      case WindowKind::kBlackman: v[i] = 0.42 - 0.5 * std::cos(t) + 0.08 * std::cos(2.0 * t); break;
    }
  }
  npy::Array a;
  a.dtype = dtype;
  a.shape = {n};
  a.data.resize(static_cast<size_t>(n) * ir::DTypeSize(dtype));
  for (int64_t i = 0; i < n; ++i) {
    switch (dtype) {
      case tfl::TensorType_FLOAT32: a.as<float>()[i] = static_cast<float>(v[i]); break;
      case tfl::TensorType_FLOAT64: a.as<double>()[i] = v[i]; break;
      case tfl::TensorType_INT32: a.as<int32_t>()[i] = static_cast<int32_t>(v[i]); break;
      case tfl::TensorType_INT64: a.as<int64_t>()[i] = static_cast<int64_t>(v[i]); break;
      default: ctx.Fail(fmt::format("a window of {} is not supported", ir::DTypeName(dtype)));
    }
  }
  ctx.OutConst(0, std::move(a));
}

// Compress with a convert-time condition: GATHER of the kept positions (of
// the flattened input when there is no axis).
void Compress(NodeContext& ctx) {
  const std::vector<int64_t> cond = ctx.ConstInts(1);
  auto& b = ctx.b();
  int x = ctx.Tensor(0);
  int axis = 0;
  int64_t dim;
  if (ctx.HasAttr("axis")) {
    axis = NormalizeAxis(ctx.Int("axis", 0), ctx.Rank(0), ctx.node().Label());
    dim = ctx.Shape(0)[axis];
  } else {
    dim = NumElements(ctx.Shape(0));
    x = b.Reshape(x, {static_cast<int32_t>(dim)});
  }
  if (static_cast<int64_t>(cond.size()) > dim) ctx.BadModel("the condition is longer than the axis");
  std::vector<int32_t> keep;
  for (size_t i = 0; i < cond.size(); ++i)
    if (cond[i]) keep.push_back(static_cast<int32_t>(i));
  if (keep.empty()) ctx.Fail("the result is empty; empty tensors are not supported");
  ctx.Out(0, b.Gather(x, ctx.ConstI32({static_cast<int64_t>(keep.size())}, keep), axis));
}

Dims Broadcast(NodeContext& ctx, const Dims& a, const Dims& b) {
  const size_t rank = std::max(a.size(), b.size());
  Dims out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) ctx.BadModel(fmt::format("shapes do not broadcast ({} vs {})", da, db));
    out[i] = da == 1 ? db : da;
  }
  return out;
}

void Expand(NodeContext& ctx) {
  const Dims out = Broadcast(ctx, ctx.Shape(0), ctx.ConstInts(1));
  if (out == ctx.Shape(0)) {
    const Perm perm = ctx.PermOf(0);
    const int x = ctx.TensorIn(0, perm);
    ctx.Out(0, ctx.b().Reshape(x, ctx.b().shape(x)), perm);
    return;
  }
  int x = ctx.Tensor(0);
  if (ctx.Rank(0) < static_cast<int>(out.size())) {
    Dims padded = ctx.Shape(0);
    padded.insert(padded.begin(), out.size() - padded.size(), 1);
    x = ctx.b().Reshape(x, ToShape32(padded));
  }
  ctx.Out(0, ctx.b().BroadcastTo(x, ToShape32(out)));
}

void Tile(NodeContext& ctx) {
  const auto repeats = ctx.ConstInts(1);
  if (static_cast<int>(repeats.size()) != ctx.Rank(0)) ctx.BadModel("repeats do not match the input rank");
  const Perm perm = ctx.PermOf(0);
  const Perm p = perm.empty() ? IdentityPerm(ctx.Rank(0)) : perm;
  std::vector<int32_t> stored;
  for (int a : p) stored.push_back(static_cast<int32_t>(repeats[a]));
  ctx.Out(0, ctx.b().Tile(ctx.TensorIn(0, perm), stored), perm);
}

void Range(NodeContext& ctx) {
  const npy::Array& s = ctx.Const(0);
  if (s.dtype == tfl::TensorType_FLOAT32) {
    const float start = ctx.ConstFloats(0).at(0), limit = ctx.ConstFloats(1).at(0), delta = ctx.ConstFloats(2).at(0);
    if (delta == 0) ctx.BadModel("delta 0");
    const int64_t n = std::max<int64_t>(static_cast<int64_t>(std::ceil((limit - start) / delta)), 0);
    npy::Array a;
    a.dtype = tfl::TensorType_FLOAT32;
    a.shape = {n};
    a.data.resize(n * 4);
    for (int64_t i = 0; i < n; ++i) a.as<float>()[i] = start + static_cast<float>(i) * delta;
    ctx.OutConst(0, std::move(a));
    return;
  }
  const int64_t start = ctx.ConstInts(0).at(0), limit = ctx.ConstInts(1).at(0), delta = ctx.ConstInts(2).at(0);
  if (delta == 0) ctx.BadModel("delta 0");
  const int64_t n = std::max<int64_t>((limit - start + delta + (delta > 0 ? -1 : 1)) / delta, 0);
  if (n > (int64_t{1} << 28)) ctx.Fail("range too large to fold");
  std::vector<int64_t> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = start + i * delta;
  npy::Array a = Int64Array({n}, v);
  if (s.dtype == tfl::TensorType_INT32) {
    npy::Array b32;
    b32.dtype = tfl::TensorType_INT32;
    b32.shape = {n};
    b32.data.resize(n * 4);
    for (int64_t i = 0; i < n; ++i) b32.as<int32_t>()[i] = static_cast<int32_t>(v[i]);
    a = std::move(b32);
  }
  ctx.OutConst(0, std::move(a));
}

// Folded only: shape arithmetic scatters into constant shape vectors.
void ScatterND(NodeContext& ctx) {
  npy::Array data = ctx.Const(0);
  const npy::Array& updates = ctx.Const(2);
  const auto idx = ctx.ConstInts(1);
  const Dims& ishape = ctx.Shape(1);
  if (ishape.empty()) ctx.BadModel("indices must have rank >= 1");
  const int64_t k = ishape.back();
  const int rank = static_cast<int>(data.shape.size());
  if (k > rank) ctx.BadModel("index depth exceeds the data rank");
  int64_t slice = 1;
  for (int i = static_cast<int>(k); i < rank; ++i) slice *= data.shape[i];
  const size_t esize = ir::DTypeSize(data.dtype);
  const int64_t count = static_cast<int64_t>(idx.size()) / std::max<int64_t>(k, 1);
  if (updates.dtype != data.dtype || updates.num_elements() != count * slice) ctx.BadModel("updates do not match");
  const std::string reduction = ctx.Str("reduction", "none");
  if (reduction != "none" && reduction != "add" && reduction != "mul") ctx.Fail("reduction '" + reduction + "'");
  auto combine = [&](int64_t dst, int64_t src) {
    auto apply = [&](auto* d, const auto* u) {
      for (int64_t i = 0; i < slice; ++i)
        d[dst + i] = reduction == "add" ? d[dst + i] + u[src + i] : d[dst + i] * u[src + i];
    };
    switch (data.dtype) {
      case tfl::TensorType_FLOAT32: apply(data.as<float>(), updates.as<float>()); break;
      case tfl::TensorType_INT32: apply(data.as<int32_t>(), updates.as<int32_t>()); break;
      case tfl::TensorType_INT64: apply(data.as<int64_t>(), updates.as<int64_t>()); break;
      default: ctx.Fail(fmt::format("reduction '{}' on {}", reduction, ir::DTypeName(data.dtype)));
    }
  };
  for (int64_t n = 0; n < count; ++n) {
    int64_t offset = 0;
    for (int64_t d = 0; d < k; ++d) {
      int64_t i = idx[n * k + d];
      if (i < 0) i += data.shape[d];
      if (i < 0 || i >= data.shape[d]) ctx.BadModel("index out of range");
      offset = offset * data.shape[d] + i;
    }
    if (reduction == "none")
      std::memcpy(data.data.data() + offset * slice * esize, updates.data.data() + n * slice * esize, slice * esize);
    else
      combine(offset * slice, n * slice);
  }
  ctx.OutConst(0, std::move(data));
}

}  // namespace

void RegisterShapeOps(Registry& r) {
  r.Add("Shape", Shape);
  r.Add("Size", Size);
  r.Add("Constant", Constant);
  r.Add("ConstantOfShape", ConstantOfShape);
  r.Add("Reshape", Reshape);
  r.Add("Flatten", Flatten);
  r.Add("Squeeze", Squeeze);
  r.Add("Unsqueeze", Unsqueeze);
  r.Add("Transpose", Transpose);
  r.Add("Concat", Concat);
  r.Add("Split", Split);
  r.Add("Slice", Slice);
  r.Add("Gather", Gather);
  r.Add("Cast", Cast);
  r.Add("CastLike", CastLike);
  r.Add("EyeLike", EyeLike);
  r.Add("HannWindow", [](NodeContext& c) { WindowOp(c, WindowKind::kHann); });
  r.Add("HammingWindow", [](NodeContext& c) { WindowOp(c, WindowKind::kHamming); });
  r.Add("BlackmanWindow", [](NodeContext& c) { WindowOp(c, WindowKind::kBlackman); });
  r.Add("Compress", Compress);
  r.Add("Expand", Expand);
  r.Add("Tile", Tile);
  r.Add("Range", Range);
  r.Add("ScatterND", ScatterND);
}

}  // namespace gpuclean::onnx::ops
