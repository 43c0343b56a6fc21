// Shape rules of ops that move data without computing on it: reshapes,
// transposes, concatenation and splitting, slices, pads, tiling,
// broadcasting and gathers.
#include <algorithm>
#include <numeric>

#include "ir/shapes_internal.h"

namespace gpuclean::ir {
namespace shapes {
namespace {

constexpr auto kInt32 = tfl::TensorType_INT32;
constexpr auto kInt64 = tfl::TensorType_INT64;

// ---------------------------------------------------------------- reshapes

Shape ResolveNewShape(const OpView& v, const std::vector<int64_t>& requested) {
  const int64_t elements = v.num_elements(0);
  Shape out;
  int stretch = -1;
  int64_t known = 1;
  for (size_t i = 0; i < requested.size(); ++i) {
    if (requested[i] == -1) {
      if (stretch >= 0) v.Fail("new shape has more than one -1");
      stretch = static_cast<int>(i);
      out.push_back(-1);
      continue;
    }
    out.push_back(ToDim(v, requested[i], "new shape entry"));
    known = CheckedMul(v, known, requested[i], "new shape");
  }
  if (stretch >= 0) {
    if (known == 0 || elements % known != 0)
      v.Fail("cannot infer the -1 in new shape {} from {} elements", FormatShape(out), elements);
    out[stretch] = static_cast<int32_t>(elements / known);
    known *= out[stretch];
  }
  if (known != elements)
    v.Fail("new shape {} holds {} elements but the input {} holds {}", FormatShape(out), known, FormatShape(v.shape(0)),
           elements);
  return out;
}

// The shape comes from the int32 vector input when there is one, otherwise
// from the new_shape option, where the legacy value [0] means a scalar.
std::vector<TensorSpec> Reshape(const OpView& v) {
  v.ExpectInputCount(1, 2);
  const std::vector<int32_t> option = v.Options<tfl::ReshapeOptionsT>().new_shape;
  const bool shape_input = v.has(1) && v.rank(1) == 1 && v.dtype(1) == kInt32;
  std::vector<int64_t> requested;
  if (shape_input && (v.input(1).value || option.empty())) {
    requested = v.Ints(1, "shape");
  } else {
    requested.assign(option.begin(), option.end());
    if (requested.size() == 1 && requested[0] == 0) requested.clear();
  }
  return {{v.dtype(0), ResolveNewShape(v, requested)}};
}

std::vector<TensorSpec> Squeeze(const OpView& v) {
  v.ExpectInputCount(1);
  const Shape& in = v.shape(0);
  const std::vector<int32_t> dims = v.Options<tfl::SqueezeOptionsT>().squeeze_dims;
  std::vector<bool> drop(in.size(), false);
  if (dims.empty()) {
    for (size_t i = 0; i < in.size(); ++i) drop[i] = in[i] == 1;
  } else {
    for (int32_t d : dims) {
      const int axis = NormalizeAxis(d, v.rank(0), v.op().name() + " squeeze_dims");
      if (in[axis] != 1) v.Fail("cannot squeeze dimension {} of {}: it is not 1", d, FormatShape(in));
      drop[axis] = true;
    }
  }
  Shape out;
  for (size_t i = 0; i < in.size(); ++i)
    if (!drop[i]) out.push_back(in[i]);
  return {{v.dtype(0), out}};
}

std::vector<TensorSpec> ExpandDims(const OpView& v) {
  v.ExpectInputCount(2);
  v.ExpectDType(1, {kInt32, kInt64}, "axis");
  const int64_t axis = v.ScalarInt(1, "axis");
  const int out_rank = v.rank(0) + 1;
  Shape out = v.shape(0);
  out.insert(out.begin() + NormalizeAxis(axis, out_rank, v.op().name()), 1);
  return {{v.dtype(0), out}};
}

std::vector<TensorSpec> Transpose(const OpView& v) {
  v.ExpectInputCount(2);
  v.ExpectDType(1, {kInt32, kInt64}, "perm");
  std::vector<int64_t> perm = v.Ints(1, "perm");
  const Shape& in = v.shape(0);
  if (perm.size() != in.size()) v.Fail("perm has {} entries for a rank {} input", perm.size(), in.size());
  std::vector<bool> seen(in.size(), false);
  Shape out;
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(in.size()) || seen[p])
      v.Fail("perm [{}] is not a permutation of 0..{}", fmt::join(perm, ","), in.size() - 1);
    seen[p] = true;
    out.push_back(in[p]);
  }
  return {{v.dtype(0), out}};
}

// ---------------------------------------------------------------- join / split

std::vector<TensorSpec> Concatenation(const OpView& v) {
  if (v.num_inputs() < 1) v.Fail("expects at least one input");
  const int rank = v.rank(0);
  if (rank == 0) v.Fail("cannot concatenate scalars");
  const int axis = NormalizeAxis(v.Options<tfl::ConcatenationOptionsT>().axis, rank, v.op().name());
  Shape out = v.shape(0);
  for (int i = 1; i < v.num_inputs(); ++i) {
    v.ExpectSameDType(0, i);
    const Shape& s = v.shape(i);
    bool compatible = static_cast<int>(s.size()) == rank;
    for (int d = 0; compatible && d < rank; ++d) compatible = d == axis || s[d] == out[d];
    if (!compatible)
      v.Fail("input {} has shape {}, which does not join input 0's {} along axis {}", i, FormatShape(s),
             FormatShape(v.shape(0)), axis);
    out[axis] = ToDim(v, int64_t{out[axis]} + s[axis], "joined size");
  }
  return {{v.dtype(0), out}};
}

// Inputs: axis, input. Splits into num_splits equal parts.
std::vector<TensorSpec> Split(const OpView& v) {
  v.ExpectInputCount(2);
  v.ExpectDType(0, {kInt32}, "axis");
  const int axis = NormalizeAxis(v.ScalarInt(0, "axis"), v.rank(1), v.op().name());
  const int32_t parts = v.Options<tfl::SplitOptionsT>().num_splits;
  const Shape& in = v.shape(1);
  if (parts < 1) v.Fail("num_splits must be >= 1, got {}", parts);
  if (in[axis] % parts != 0)
    v.Fail("dimension {} of {} does not split into {} equal parts", axis, FormatShape(in), parts);
  Shape part = in;
  part[axis] /= parts;
  return std::vector<TensorSpec>(parts, TensorSpec{v.dtype(1), part});
}

// Inputs: input, size_splits, axis. One size may be -1 (the remainder).
std::vector<TensorSpec> SplitV(const OpView& v) {
  v.ExpectInputCount(3);
  v.ExpectDType(1, {kInt32, kInt64}, "size_splits");
  v.ExpectDType(2, {kInt32}, "axis");
  const Shape& in = v.shape(0);
  const int axis = NormalizeAxis(v.ScalarInt(2, "axis"), v.rank(0), v.op().name());
  std::vector<int64_t> sizes = v.Ints(1, "size_splits");
  const int32_t parts = v.Options<tfl::SplitVOptionsT>().num_splits;
  if (static_cast<int32_t>(sizes.size()) != parts)
    v.Fail("num_splits is {} but size_splits has {} entries", parts, sizes.size());
  int unknown = -1;
  int64_t total = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) {
      if (unknown >= 0) v.Fail("size_splits has more than one -1");
      unknown = static_cast<int>(i);
    } else if (sizes[i] < 0) {
      v.Fail("size_splits entry {} is negative", sizes[i]);
    } else {
      total += sizes[i];
    }
  }
  if (unknown >= 0) {
    if (total > in[axis]) v.Fail("size_splits add up to {}, more than dimension {} ({})", total, axis, in[axis]);
    sizes[unknown] = in[axis] - total;
  } else if (total != in[axis]) {
    v.Fail("size_splits add up to {} but dimension {} is {}", total, axis, in[axis]);
  }
  std::vector<TensorSpec> out;
  for (int64_t s : sizes) {
    Shape part = in;
    part[axis] = static_cast<int32_t>(s);
    out.push_back({v.dtype(0), part});
  }
  return out;
}

std::vector<TensorSpec> Pack(const OpView& v) {
  const auto o = v.Options<tfl::PackOptionsT>();
  if (v.num_inputs() < 1) v.Fail("expects at least one input");
  if (o.values_count != v.num_inputs())
    v.Fail("values_count is {} but there are {} inputs", o.values_count, v.num_inputs());
  for (int i = 1; i < v.num_inputs(); ++i) {
    v.ExpectSameDType(0, i);
    if (v.shape(i) != v.shape(0))
      v.Fail("input {} has shape {} but input 0 has {}", i, FormatShape(v.shape(i)), FormatShape(v.shape(0)));
  }
  Shape out = v.shape(0);
  const int axis = NormalizeAxis(o.axis, v.rank(0) + 1, v.op().name());
  out.insert(out.begin() + axis, v.num_inputs());
  return {{v.dtype(0), out}};
}

std::vector<TensorSpec> Unpack(const OpView& v) {
  v.ExpectInputCount(1);
  const auto o = v.Options<tfl::UnpackOptionsT>();
  if (v.rank(0) == 0) v.Fail("cannot unpack a scalar");
  const int axis = NormalizeAxis(o.axis, v.rank(0), v.op().name());
  const int32_t count = v.shape(0)[axis];
  if (o.num != count) v.Fail("num is {} but dimension {} of {} is {}", o.num, axis, FormatShape(v.shape(0)), count);
  Shape part = v.shape(0);
  part.erase(part.begin() + axis);
  return std::vector<TensorSpec>(count, TensorSpec{v.dtype(0), part});
}

// ---------------------------------------------------------------- slices

std::vector<TensorSpec> Slice(const OpView& v) {
  v.ExpectInputCount(3);
  v.ExpectDType(1, {kInt32, kInt64}, "begin");
  v.ExpectDType(2, {kInt32, kInt64}, "size");
  const Shape& in = v.shape(0);
  std::vector<int64_t> begin = v.Ints(1, "begin");
  std::vector<int64_t> size = v.Ints(2, "size");
  if (begin.size() != in.size() || size.size() != in.size())
    v.Fail("begin and size need {} entries, got {} and {}", in.size(), begin.size(), size.size());
  Shape out;
  for (size_t d = 0; d < in.size(); ++d) {
    const int64_t length = size[d] == -1 ? in[d] - begin[d] : size[d];
    if (begin[d] < 0 || length < 0 || begin[d] + length > in[d])
      v.Fail("slice [{}, +{}) is outside dimension {} of {}", begin[d], size[d], d, FormatShape(in));
    out.push_back(static_cast<int32_t>(length));
  }
  return {{v.dtype(0), out}};
}

std::vector<TensorSpec> StridedSlice(const OpView& v) {
  v.ExpectInputCount(4);
  for (int i = 1; i <= 3; ++i) {
    v.ExpectDType(i, {kInt32}, i == 1 ? "begin" : i == 2 ? "end" : "strides");
    v.ExpectRank(i, 1, i == 1 ? "begin" : i == 2 ? "end" : "strides");
  }
  std::vector<int64_t> begin = v.Ints(1, "begin");
  std::vector<int64_t> end = v.Ints(2, "end");
  std::vector<int64_t> strides = v.Ints(3, "strides");
  try {
    StridedSlicePlan plan = PlanStridedSlice(v.shape(0), begin, end, strides, v.Options<tfl::StridedSliceOptionsT>());
    return {{v.dtype(0), plan.output_shape}};
  } catch (const Error& e) {
    v.Fail("{}", e.what());
  }
}

// ---------------------------------------------------------------- pads

std::vector<std::pair<int64_t, int64_t>> ReadPaddings(const OpView& v) {
  v.ExpectDType(1, {kInt32, kInt64}, "paddings");
  const Shape expected = {static_cast<int32_t>(v.rank(0)), 2};
  if (v.shape(1) != expected)
    v.Fail("paddings must have shape {} for a rank {} input, got {}", FormatShape(expected), v.rank(0),
           FormatShape(v.shape(1)));
  std::vector<int64_t> flat = v.Ints(1, "paddings");
  std::vector<std::pair<int64_t, int64_t>> pads;
  for (size_t d = 0; d < flat.size() / 2; ++d) {
    if (flat[2 * d] < 0 || flat[2 * d + 1] < 0)
      v.Fail("paddings of dimension {} are negative ({}, {})", d, flat[2 * d], flat[2 * d + 1]);
    pads.emplace_back(flat[2 * d], flat[2 * d + 1]);
  }
  return pads;
}

Shape PaddedShape(const OpView& v, const std::vector<std::pair<int64_t, int64_t>>& pads) {
  Shape out = v.shape(0);
  for (size_t d = 0; d < out.size(); ++d) out[d] = ToDim(v, out[d] + pads[d].first + pads[d].second, "padded size");
  return out;
}

std::vector<TensorSpec> Pad(const OpView& v) {
  v.ExpectInputCount(2, 3);
  if (v.has(2)) {
    // PADV2's constant_values: one value of the input's type.
    v.ExpectSameDType(0, 2);
    if (v.num_elements(2) != 1) v.Fail("constant_values must hold one value, got shape {}", FormatShape(v.shape(2)));
  }
  return {{v.dtype(0), PaddedShape(v, ReadPaddings(v))}};
}

std::vector<TensorSpec> MirrorPad(const OpView& v) {
  v.ExpectInputCount(2);
  const auto pads = ReadPaddings(v);
  // REFLECT excludes the border, so it can mirror at most size - 1 elements.
  const bool symmetric = v.Options<tfl::MirrorPadOptionsT>().mode == tfl::MirrorPadMode_SYMMETRIC;
  for (size_t d = 0; d < pads.size(); ++d) {
    const int64_t limit = symmetric ? v.shape(0)[d] : v.shape(0)[d] - 1;
    if (pads[d].first > limit || pads[d].second > limit)
      v.Fail("{} padding ({}, {}) exceeds {} for dimension {} of {}", symmetric ? "SYMMETRIC" : "REFLECT",
             pads[d].first, pads[d].second, limit, d, FormatShape(v.shape(0)));
  }
  return {{v.dtype(0), PaddedShape(v, pads)}};
}

// ---------------------------------------------------------------- tiling

std::vector<TensorSpec> Tile(const OpView& v) {
  v.ExpectInputCount(2);
  v.ExpectDType(1, {kInt32, kInt64}, "multiples");
  std::vector<int64_t> multiples = v.Ints(1, "multiples");
  if (multiples.size() != v.shape(0).size())
    v.Fail("multiples has {} entries for a rank {} input", multiples.size(), v.rank(0));
  Shape out = v.shape(0);
  for (size_t d = 0; d < out.size(); ++d) {
    if (multiples[d] < 0) v.Fail("multiple {} of dimension {} is negative", multiples[d], d);
    out[d] = ToDim(v, CheckedMul(v, out[d], multiples[d], "tiled size"), "tiled size");
  }
  return {{v.dtype(0), out}};
}

// The operand's shape: the update is written into a copy of it.
std::vector<TensorSpec> DynamicUpdateSlice(const OpView& v) {
  v.ExpectInputCount(3);
  v.ExpectSameDType(0, 1);
  if (v.rank(1) != v.rank(0)) v.Fail("update (input 1) has rank {}, the operand rank {}", v.rank(1), v.rank(0));
  v.ExpectRank(2, 1, "start indices");
  v.ExpectDType(2, {kInt32, kInt64}, "start indices");
  return {{v.dtype(0), v.shape(0)}};
}

// The input with the axes listed in input 1 reversed.
std::vector<TensorSpec> ReverseV2(const OpView& v) {
  v.ExpectInputCount(2);
  v.ExpectDType(1, {kInt32, kInt64}, "axis");
  v.ExpectRank(1, 1, "axis");
  return {{v.dtype(0), v.shape(0)}};
}

std::vector<TensorSpec> BroadcastTo(const OpView& v) {
  v.ExpectInputCount(2);
  v.ExpectDType(1, {kInt32, kInt64}, "shape");
  v.ExpectRank(1, 1, "shape");
  Shape target;
  for (int64_t d : v.Ints(1, "shape")) target.push_back(ToDim(v, d, "shape entry"));
  const Shape& in = v.shape(0);
  bool ok = in.size() <= target.size();
  for (size_t i = 0; ok && i < in.size(); ++i) {
    const int32_t d = in[in.size() - 1 - i];
    ok = d == 1 || d == target[target.size() - 1 - i];
  }
  if (!ok) v.Fail("input {} does not broadcast to {}", FormatShape(in), FormatShape(target));
  return {{v.dtype(0), target}};
}

// ---------------------------------------------------------------- gathers

// params[:axis] + indices[batch_dims:] + params[axis + 1:]
std::vector<TensorSpec> Gather(const OpView& v) {
  v.ExpectInputCount(2);
  v.ExpectDType(1, {kInt32, kInt64, tfl::TensorType_INT16}, "indices");
  const auto o = v.Options<tfl::GatherOptionsT>();
  const Shape& params = v.shape(0);
  const Shape& indices = v.shape(1);
  if (params.empty()) v.Fail("params must have rank >= 1");
  const int axis = NormalizeAxis(o.axis, v.rank(0), v.op().name());
  const int batch_dims = o.batch_dims < 0 ? o.batch_dims + v.rank(1) : o.batch_dims;
  if (batch_dims < 0 || batch_dims > v.rank(1) || batch_dims > axis)
    v.Fail("batch_dims {} must lie in [0, min(indices rank {}, axis {})]", o.batch_dims, v.rank(1), axis);
  for (int d = 0; d < batch_dims; ++d)
    if (params[d] != indices[d])
      v.Fail("batch dimension {} differs: params {} vs indices {}", d, FormatShape(params), FormatShape(indices));
  Shape out(params.begin(), params.begin() + axis);
  out.insert(out.end(), indices.begin() + batch_dims, indices.end());
  out.insert(out.end(), params.begin() + axis + 1, params.end());
  return {{v.dtype(0), out}};
}

// indices[:-1] + params[indices[-1]:]
std::vector<TensorSpec> GatherNd(const OpView& v) {
  v.ExpectInputCount(2);
  v.ExpectDType(1, {kInt32, kInt64, tfl::TensorType_INT16}, "indices");
  const Shape& params = v.shape(0);
  const Shape& indices = v.shape(1);
  if (params.empty() || indices.empty()) v.Fail("params and indices must have rank >= 1");
  const int32_t depth = indices.back();
  if (depth > static_cast<int32_t>(params.size()))
    v.Fail("indices address {} dimensions but params {} has {}", depth, FormatShape(params), params.size());
  Shape out(indices.begin(), indices.end() - 1);
  out.insert(out.end(), params.begin() + depth, params.end());
  return {{v.dtype(0), out}};
}

std::vector<TensorSpec> ShapeOp(const OpView& v) {
  v.ExpectInputCount(1);
  const DType type =
      v.op().options.type == tfl::BuiltinOptions_ShapeOptions ? v.Options<tfl::ShapeOptionsT>().out_type : kInt32;
  return {{type, {v.rank(0)}}};
}

}  // namespace

void AddLayoutRules(RuleTable& t) {
  t.builtin[tfl::BuiltinOperator_RESHAPE] = Reshape;
  t.builtin[tfl::BuiltinOperator_SQUEEZE] = Squeeze;
  t.builtin[tfl::BuiltinOperator_EXPAND_DIMS] = ExpandDims;
  t.builtin[tfl::BuiltinOperator_TRANSPOSE] = Transpose;
  t.builtin[tfl::BuiltinOperator_CONCATENATION] = Concatenation;
  t.builtin[tfl::BuiltinOperator_SPLIT] = Split;
  t.builtin[tfl::BuiltinOperator_SPLIT_V] = SplitV;
  t.builtin[tfl::BuiltinOperator_PACK] = Pack;
  t.builtin[tfl::BuiltinOperator_UNPACK] = Unpack;
  t.builtin[tfl::BuiltinOperator_SLICE] = Slice;
  t.builtin[tfl::BuiltinOperator_STRIDED_SLICE] = StridedSlice;
  t.builtin[tfl::BuiltinOperator_PAD] = Pad;
  t.builtin[tfl::BuiltinOperator_PADV2] = Pad;
  t.builtin[tfl::BuiltinOperator_MIRROR_PAD] = MirrorPad;
  t.builtin[tfl::BuiltinOperator_TILE] = Tile;
  t.builtin[tfl::BuiltinOperator_DYNAMIC_UPDATE_SLICE] = DynamicUpdateSlice;
  t.builtin[tfl::BuiltinOperator_BROADCAST_TO] = BroadcastTo;
  t.builtin[tfl::BuiltinOperator_REVERSE_V2] = ReverseV2;
  t.builtin[tfl::BuiltinOperator_GATHER] = Gather;
  t.builtin[tfl::BuiltinOperator_GATHER_ND] = GatherNd;
  t.builtin[tfl::BuiltinOperator_SHAPE] = ShapeOp;
}

}  // namespace shapes

// ---------------------------------------------------------------- strided slice plan

StridedSlicePlan PlanStridedSlice(std::span<const int32_t> input_shape, std::span<const int64_t> begin,
                                  std::span<const int64_t> end, std::span<const int64_t> strides,
                                  const tfl::StridedSliceOptionsT& o) {
  const int given = static_cast<int>(begin.size());
  if (end.size() != begin.size() || strides.size() != begin.size())
    ThrowBadInput(
        fmt::format("begin, end and strides differ in length ({}, {}, {})", begin.size(), end.size(), strides.size()));
  if (given > 31) ThrowBadInput(fmt::format("{} slice entries exceed the 31 the masks can address", given));
  // Mask bits beyond the given entries mean nothing.
  auto bit = [given](int32_t mask, int i) { return i >= 0 && i < given && ((mask >> i) & 1) != 0; };
  int ellipses = 0, new_axes = 0;
  for (int i = 0; i < given; ++i) {
    if (bit(o.ellipsis_mask, i)) ++ellipses;
    // A new axis at the ellipsis' own position is ignored, as in LiteRT.
    else if (bit(o.new_axis_mask, i))
      ++new_axes;
  }
  if (ellipses > 1) ThrowBadInput("ellipsis_mask has more than one bit set");
  const int rank = static_cast<int>(input_shape.size());
  const int dims = rank + new_axes;
  if (given - new_axes - ellipses > rank)
    ThrowBadInput(
        fmt::format("{} slice entries address more dimensions than the input {} has", given, FormatShape(input_shape)));

  // Expand the ellipsis over the input dimensions the other entries leave
  // unnamed; entries after it shift right by the expansion.
  std::vector<bool> in_ellipsis(dims, false), is_new_axis(dims, false);
  int ellipsis_start = dims, expansion = 0;
  for (int i = 0; i < dims;) {
    if (bit(o.ellipsis_mask, i) && ellipsis_start == dims) {
      ellipsis_start = i;
      const int ellipsis_end = std::max(i + 1, std::min(i + 1 + new_axes + rank - given, dims));
      expansion = ellipsis_end - i - 1;
      for (; i < ellipsis_end; ++i) in_ellipsis[i] = true;
      continue;
    }
    is_new_axis[i] = bit(o.new_axis_mask, i - expansion);
    ++i;
  }

  StridedSlicePlan plan;
  int added_axes = 0, ellipsis_shift = 0;
  for (int i = 0; i < dims; ++i) {
    const bool full_range = in_ellipsis[i] || (!is_new_axis[i] && i >= given + expansion);
    if (in_ellipsis[i]) ellipsis_shift = std::max(0, i - ellipsis_start);
    if (is_new_axis[i]) {
      plan.effective_shape.push_back(1);
      plan.begin.push_back(0);
      plan.end.push_back(1);
      plan.stride.push_back(1);
      plan.shrink.push_back(false);
      plan.output_shape.push_back(1);
      ++added_axes;
      continue;
    }
    const int input_dim = i - added_axes;
    if (input_dim >= rank)
      ThrowBadInput(fmt::format("slice addresses more dimensions than the input {} has", FormatShape(input_shape)));
    const int32_t size = input_shape[input_dim];
    plan.effective_shape.push_back(size);
    if (full_range) {
      plan.begin.push_back(0);
      plan.end.push_back(size);
      plan.stride.push_back(1);
      plan.shrink.push_back(false);
      plan.output_shape.push_back(size);
      continue;
    }
    const int k = i - ellipsis_shift;  // index into begin/end/strides
    const int64_t stride = strides[k];
    if (stride == 0) ThrowBadInput(fmt::format("stride {} is zero", k));
    // Clamp into [0, size] going forward, [-1, size - 1] going backward.
    const int64_t low = stride > 0 ? 0 : -1, high = stride > 0 ? size : size - 1;
    auto clamp = [&](int64_t x) { return std::clamp(x < 0 ? x + size : x, low, high); };
    const bool begin_masked = bit(o.begin_mask, k);
    int64_t start = begin_masked ? (stride > 0 ? 0 : size - 1) : clamp(begin[k]);
    if (bit(o.shrink_axis_mask, k)) {
      // Takes the one element at `begin` (LiteRT honours begin_mask here; TF
      // would not); an index outside the dimension has no element to take.
      if (!begin_masked && (begin[k] < -size || begin[k] >= size))
        ThrowBadInput(fmt::format("shrink index {} is outside dimension {} of {}", begin[k], input_dim,
                                  FormatShape(input_shape)));
      if (size == 0) ThrowBadInput(fmt::format("cannot shrink empty dimension {}", input_dim));
      if (!begin_masked) start = begin[k] < 0 ? begin[k] + size : begin[k];
      plan.begin.push_back(static_cast<int32_t>(start));
      plan.end.push_back(static_cast<int32_t>(start + 1));
      plan.stride.push_back(1);
      plan.shrink.push_back(true);
      continue;
    }
    int64_t stop;
    if (bit(o.end_mask, k)) {
      stop = stride > 0 ? size : -1;
    } else if (o.offset) {
      // `end` is a length measured from `start`.
      stop = std::clamp(start + end[k], low, high);
      if (start + end[k] != stop)
        ThrowBadInput(fmt::format("offset slice of {} from {} runs past dimension {} of {}", end[k], start, input_dim,
                                  FormatShape(input_shape)));
    } else {
      stop = clamp(end[k]);
    }
    const int64_t span = stride > 0 ? stop - start : start - stop;
    const int64_t step = stride > 0 ? stride : -stride;
    plan.begin.push_back(static_cast<int32_t>(start));
    plan.end.push_back(static_cast<int32_t>(stop));
    plan.stride.push_back(static_cast<int32_t>(stride));
    plan.shrink.push_back(false);
    plan.output_shape.push_back(span <= 0 ? 0 : static_cast<int32_t>((span + step - 1) / step));
  }
  return plan;
}

}  // namespace gpuclean::ir
